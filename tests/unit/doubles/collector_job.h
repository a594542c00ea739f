#pragma once

// The signed job of signed_job.h uploaded to an in-process collector (in_process_collector.h)
// under the job's CA, and the transport flags a support engineer passes to reach it with
// alice's certificate. Link ibc_collector, ibc_client and ibc_test_pki.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "in_process_collector.h"
#include "signed_job.h"

namespace ibc::test {

class CollectorWithJob {
 public:
  CollectorWithJob() {
    auto c = collector_.connect(job_.node01_credential);
    for (const auto& path : {job_.node01_snapshot, job_.node02_snapshot}) {
      os::RootedFilesystem files("");
      auto envelope = core::decodeSnapshotFile(*files.readFile(path, core::kMaxSnapshotFileBytes));
      auto ack = c->call(uploadOf(*envelope));
      EXPECT_TRUE(ack.ok()) << (ack.ok() ? "" : ack.error().message);
    }
  }
  const SignedJob& job() const { return job_; }
  InProcessCollector& collector() { return collector_; }
  // --collector 127.0.0.1:PORT --ca --cert --key (alice, support) and an empty --config.
  std::vector<std::string> supportFlags() const { return flags(job_.alice); }
  // `args` followed by supportFlags(): a support command line that reaches this collector.
  std::vector<std::string> withSupportFlags(std::vector<std::string> args) const {
    const auto extra = supportFlags();
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::vector<std::string> flags(const CredentialFiles& who) const {
    return {
        "--config", empty_config_, "--collector", "127.0.0.1:" + std::to_string(collector_.port()),
        "--ca",     job_.ca_pem,   "--cert",      who.cert,
        "--key",    who.key};
  }

 private:
  SignedJob job_ = makeSignedJob("collector-job");
  InProcessCollector collector_{{}, job_.ca};
  std::string empty_config_ = writeTestFile(job_.dir + "/empty.conf", "");
};

}  // namespace ibc::test

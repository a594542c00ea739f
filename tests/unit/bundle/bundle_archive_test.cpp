// The .ibbundle archive: round trip, and every hostile archive refused with its reason. The
// hostile archives are built here with libarchive itself (what an attacker would use). The
// verifying reader: a signed bundle read whole, and bombs and forgeries stopped at the bound of
// what no signature vouches for.

#include "ibc/bundle/bundle_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>

#include "bundle_bomb.h"
#include "ibc/core/snapshot_file.h"
#include "test_pki.h"

using ::testing::HasSubstr;

namespace ibc::bundle {
namespace {

struct Entry {
  Entry(std::string n, std::string b, mode_t t = AE_IFREG, std::string l = {}, bool hard = false)
      : name(std::move(n)), bytes(std::move(b)), type(t), link(std::move(l)), hardlink(hard) {}
  std::string name;
  std::string bytes;
  mode_t type;
  std::string link;  // symlink target
  bool hardlink;
};

la_ssize_t append(archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

// A tar.zst (or plain tar) with exactly these entries, whatever they are.
std::string makeArchive(const std::vector<Entry>& entries, bool zstd = true) {
  std::string out;
  archive* a = archive_write_new();
  if (zstd) archive_write_add_filter_zstd(a);
  archive_write_set_format_pax_restricted(a);
  archive_write_set_bytes_in_last_block(a, 1);  // no zero padding after the zstd frame
  archive_write_open(a, &out, nullptr, append, nullptr);
  for (const auto& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.name.c_str());
    archive_entry_set_filetype(entry, e.type);
    archive_entry_set_perm(entry, 0644);
    if (!e.link.empty()) {
      if (e.hardlink) {
        archive_entry_set_hardlink(entry, e.link.c_str());
      } else {
        archive_entry_set_symlink(entry, e.link.c_str());
      }
    }
    if (e.type == AE_IFREG && !e.hardlink)
      archive_entry_set_size(entry, static_cast<la_int64_t>(e.bytes.size()));
    EXPECT_EQ(archive_write_header(a, entry), ARCHIVE_OK) << archive_error_string(a);
    if (!e.bytes.empty()) archive_write_data(a, e.bytes.data(), e.bytes.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

std::string refusal(const std::string& archive_bytes, const core::BundleLimits& limits = {}) {
  auto r = ibc::bundle::readBundleArchive(archive_bytes, limits);
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.error().message;
}

TEST(BundleArchive, RoundTripsEveryMemberByteForByte) {
  core::BundleMembers m{{"manifest.json", "{}"},
                        {"snapshots/a.ibsnap", std::string("\0\x01\xff", 3)},
                        {"report.md", std::string(300000, 'x')}};
  auto bytes = ibc::bundle::writeBundleArchive(m);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  EXPECT_LT(bytes->size(), 10000u) << "zstd compresses";
  EXPECT_EQ(bytes->substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4)) << "zstd magic";
  auto back = ibc::bundle::readBundleArchive(*bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, m);
}

TEST(BundleArchive, WritingRefusesUnsafeNames) {
  EXPECT_FALSE(ibc::bundle::writeBundleArchive({{"../x", "a"}}).ok());
  EXPECT_FALSE(ibc::bundle::writeBundleArchive({{"/abs", "a"}}).ok());
}

TEST(BundleArchive, DirectoriesAndDotSlashNamesFromTarAreAccepted) {
  auto r = ibc::bundle::readBundleArchive(makeArchive({{"./", "", AE_IFDIR},
                                                       {"./snapshots/", "", AE_IFDIR},
                                                       {"./manifest.json", "{}"},
                                                       {"./snapshots/a.ibsnap", "x"}}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->size(), 2u);
  EXPECT_EQ(r->count("snapshots/a.ibsnap"), 1u);
}

TEST(BundleArchive, AbsoluteAndDotDotPathsAreRefused) {
  EXPECT_NE(refusal(makeArchive({{"/etc/cron.d/x", "a"}})).find("absolute path"),
            std::string::npos);
  EXPECT_NE(refusal(makeArchive({{"host/../../evil", "a"}})).find("'..' component"),
            std::string::npos);
  EXPECT_NE(refusal(makeArchive({{"../evil", "a"}})).find("'..' component"), std::string::npos);
}

TEST(BundleArchive, LinksAreRefused) {
  EXPECT_NE(
      refusal(makeArchive({{"report.md", "", AE_IFLNK, "/etc/shadow"}})).find("symbolic link"),
      std::string::npos);
  EXPECT_NE(refusal(makeArchive({{"manifest.json", "{}"},
                                 {"report.md", "", AE_IFREG, "manifest.json", true}}))
                .find("hard link"),
            std::string::npos);
}

TEST(BundleArchive, DevicesAndFifosAreRefused) {
  EXPECT_NE(refusal(makeArchive({{"report.md", "", AE_IFCHR}})).find("character device"),
            std::string::npos);
  EXPECT_NE(refusal(makeArchive({{"report.md", "", AE_IFBLK}})).find("block device"),
            std::string::npos);
  EXPECT_NE(refusal(makeArchive({{"report.md", "", AE_IFIFO}})).find("fifo"), std::string::npos);
}

TEST(BundleArchive, DuplicateNamesAreRefused) {
  const auto why = refusal(makeArchive({{"report.md", "a"}, {"report.md", "b"}}));
  EXPECT_THAT(why, HasSubstr("appears twice"));
}

TEST(BundleArchive, MoreMembersThanTheBoundAreRefused) {
  std::vector<Entry> many;
  for (int i = 0; i < 20; ++i) many.push_back({"host/h" + std::to_string(i) + ".json", "{}"});
  core::BundleLimits limits;
  limits.max_members = 10;
  EXPECT_NE(refusal(makeArchive(many), limits).find("more than 10 members"), std::string::npos);
  limits.max_members = 20;
  EXPECT_TRUE(ibc::bundle::readBundleArchive(makeArchive(many), limits).ok());
}

TEST(BundleArchive, AZstdBombStopsAtTheBoundWhileInflating) {
  // 256 MiB of zeros compress to a few KiB; the bound is 1 MiB per member.
  const std::string zeros(256u << 20, '\0');
  const auto bomb = makeArchive({{"report.md", zeros}});
  ASSERT_LT(bomb.size(), 64u * 1024);
  core::BundleLimits limits;
  limits.max_member_bytes = 1u << 20;
  const auto why = refusal(bomb, limits);
  EXPECT_THAT(why, HasSubstr("more than a member may be"));
}

TEST(BundleArchive, AMemberWhoseHeaderUndersellsItIsCountedAsItInflates) {
  // Total bound: many members each under the member bound, over the total.
  std::vector<Entry> entries;
  for (int i = 0; i < 8; ++i)
    entries.push_back({"host/h" + std::to_string(i) + ".json", std::string(1u << 20, 'a')});
  core::BundleLimits limits;
  limits.max_total_bytes = 4u << 20;
  const auto why = refusal(makeArchive(entries), limits);
  EXPECT_THAT(why, HasSubstr("in all"));
}

TEST(BundleArchive, GarbageTruncatedAndOtherFormatsAreMalformed) {
  for (const std::string& bad :
       {std::string(), std::string("not an archive at all"), std::string(1000, '\0')}) {
    auto r = ibc::bundle::readBundleArchive(bad);
    EXPECT_FALSE(r.ok());
  }
  const auto good = makeArchive({{"report.md", std::string(100000, 'r')}});
  auto truncated = ibc::bundle::readBundleArchive(good.substr(0, good.size() / 2));
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().code, core::ErrorCode::Malformed);
}

// ---- the verifying reader ------------------------------------------------------------------

namespace v1 = ::ibcollect::v1;

struct SignedJob {
  test::TestCa ca = test::TestCa::create("archive CA");
  test::TestCredential node = ca.issue(test::agentSpec("acme", "gpu07"));
  test::TestCredential alice = ca.issue(test::supportSpec("alice"));
  test::TestCa other = test::TestCa::create("a forger's CA");
  test::TestCredential mallory = other.issue(test::supportSpec("mallory"));
};

const SignedJob& job() {
  static const SignedJob j;
  return j;
}

core::SnapshotSigner signerOf(const test::TestCredential& c) {
  auto s = core::SnapshotSigner::fromPem(c.certificate_pem, c.key_pem);
  EXPECT_TRUE(s.ok());
  return std::move(*s);
}

// A one-node bundle exported by `exporter` (synthetic snapshot built here).
core::BundleMembers exported(const test::TestCredential& exporter) {
  v1::Snapshot s;
  s.set_schema_version(1);
  s.mutable_node()->set_hostname("gpu07");
  s.mutable_node()->set_job_id("4242");
  s.mutable_node()->set_collected_at_unix_ms(1700000060000);
  auto env = signerOf(job().node).sign(s);
  EXPECT_TRUE(env.ok());
  core::BundleExportOptions o;
  o.ibcollect_version = "test";
  o.created_unix_ms = 1700000100000;
  auto m = core::buildBundle({{core::encodeSnapshotFile(*env), "a.ibsnap"}}, o, signerOf(exporter));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? *m : core::BundleMembers{};
}

std::unique_ptr<core::SignatureVerifier> verifier() {
  auto v = core::SignatureVerifier::fromPem(job().ca.certificatePem());
  EXPECT_TRUE(v.ok());
  return v.ok() ? std::move(*v) : nullptr;
}

std::string bombFile(const core::BundleMembers& head, int members, std::uint64_t bytes) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("ibc-bomb-" + std::to_string(::getpid()) + ".ibbundle"))
                               .string();
  test::writeZeroBomb(path, head, members, bytes);
  std::ifstream in(path, std::ios::binary);
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return out;
}

std::uint64_t heldBytes(const core::BundleMembers& m) {
  std::uint64_t n = 0;
  for (const auto& [name, bytes] : m) n += bytes.size();
  return n;
}

bool stoppedUnread(const core::BundleCheck& c, std::string_view why) {
  for (const auto& p : c.problems) {
    if (p.problem == core::BundleProblem::Unread && p.message.find(why) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// The bound of what no signature vouches for in these tests: 4 MiB (64 MiB in the product).
constexpr std::uint64_t kUnvouched = 4u << 20;

// `bytes` read and verified against the job's CA with that bound; fails the test when the
// archive itself cannot be read.
VerifiedBundle verifiedRead(const std::string& bytes) {
  core::BundleLimits limits;
  limits.max_unvouched_bytes = kUnvouched;
  auto read = readVerifiedBundle(bytes, *verifier(), std::chrono::system_clock::now(), limits);
  EXPECT_TRUE(read.ok()) << read.error().message;
  return read.ok() ? std::move(*read) : VerifiedBundle{};
}

TEST(VerifiedRead, ASignedBundleIsReadWholeManifestFirstAndVerifies) {
  const auto members = exported(job().alice);
  auto bytes = writeBundleArchive(members);
  ASSERT_TRUE(bytes.ok());
  std::vector<std::string> order;
  ASSERT_TRUE(streamBundleArchive(
                  *bytes, {},
                  [&](const std::string& name, std::uint64_t) {
                    order.push_back(name);
                    return MemberAction::Skip;
                  },
                  [](std::string, std::string) { ADD_FAILURE() << "a skipped member was read"; })
                  .ok());
  ASSERT_GE(order.size(), 3u);
  EXPECT_EQ(order[0], "manifest.json");
  EXPECT_EQ(order[1], "manifest.sig");
  auto read = readVerifiedBundle(*bytes, *verifier(), std::chrono::system_clock::now());
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_TRUE(read->check.ok());
  EXPECT_EQ(read->members, members);
  EXPECT_EQ(read->check.snapshots.size(), 1u);
}

TEST(VerifiedRead, ABombWithoutAManifestStopsAtTheUnvouchedBound) {
  const auto bomb = bombFile({}, 64, 1u << 20);  // 64 MiB of zeros
  ASSERT_LT(bomb.size(), 64u * 1024);
  const auto read = verifiedRead(bomb);
  EXPECT_FALSE(read.check.ok());
  EXPECT_TRUE(stoppedUnread(read.check, "manifest.json and manifest.sig do not come first"));
  EXPECT_LE(heldBytes(read.members), kUnvouched);
  EXPECT_EQ(read.members.size(), 4u);  // 4 of 64 members inflated
}

TEST(VerifiedRead, AForgedManifestVouchesForNothing) {
  // A real manifest and signature, signed by a support certificate of a CA not trusted here,
  // listing the bomb's members is still no one's word.
  const auto forged = exported(job().mallory);
  core::BundleMembers head{{"manifest.json", forged.at("manifest.json")},
                           {"manifest.sig", forged.at("manifest.sig")}};
  const auto read = verifiedRead(bombFile(head, 64, 1u << 20));
  EXPECT_TRUE(stoppedUnread(read.check, "manifest.json and manifest.sig do not verify"));
  EXPECT_LE(heldBytes(read.members), kUnvouched);
}

TEST(VerifiedRead, MembersAVerifiedManifestDoesNotListStopAtTheBound) {
  // The exporter's genuine manifest vouches for its own members, not for what is added.
  const auto real = exported(job().alice);
  const auto read = verifiedRead(bombFile(real, 64, 1u << 20));
  EXPECT_TRUE(stoppedUnread(read.check, "members manifest.json does not list at their size"));
  EXPECT_LE(heldBytes(read.members), heldBytes(real) + kUnvouched);
}

TEST(VerifiedRead, AMemberLargerThanItsListedSizeIsNotVouchedFor) {
  auto members = exported(job().alice);
  const std::string report(core::kReportMember);
  members[report] += std::string(8u << 20, 'x');  // past the bound, though listed
  auto bytes = writeBundleArchive(members);
  ASSERT_TRUE(bytes.ok());
  const auto read = verifiedRead(*bytes);
  ASSERT_FALSE(read.check.ok());
  EXPECT_EQ(read.check.problems.front().member, report);
  EXPECT_EQ(read.check.problems.front().problem, core::BundleProblem::Unread);
}

}  // namespace
}  // namespace ibc::bundle

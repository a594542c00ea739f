// The read seam held in memory: pasted `grep . /sys/...` listings read through the probes.
#include <algorithm>

#include "fd.h"
#include "ibc/os/os.h"

namespace ibc::os {

using detail::startsWithPath;

namespace {
std::string normalisePath(std::string_view path) {
  std::string p(path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}
}  // namespace

void MemoryFilesystem::addFile(std::string path, std::string content) {
  files_[normalisePath(path)] = std::move(content);
}

void MemoryFilesystem::addSymlink(std::string path, std::string target) {
  links_[normalisePath(path)] = std::move(target);
}

Result<std::string> MemoryFilesystem::readFile(std::string_view path, std::size_t max_bytes,
                                               bool* truncated) const {
  auto it = files_.find(normalisePath(path));
  if (it == files_.end()) {
    return Error{isDirectory(path) ? ErrorCode::InvalidArgument : ErrorCode::NotFound,
                 std::string(path) +
                     (isDirectory(path) ? ": is a directory" : ": No such file or directory")};
  }
  if (it->second.size() > max_bytes) {
    if (truncated == nullptr) return Error{ErrorCode::TooLarge, std::string(path) + ": too large"};
    *truncated = true;
    return it->second.substr(0, max_bytes);
  }
  if (truncated != nullptr) *truncated = false;
  return it->second;
}

Result<std::string> MemoryFilesystem::readTail(std::string_view path, std::size_t max_bytes) const {
  auto r = readFile(path, SIZE_MAX);
  if (!r.ok()) return r;
  if (r->size() > max_bytes) return r->substr(r->size() - max_bytes);
  return r;
}

Result<std::vector<std::string>> MemoryFilesystem::listDir(std::string_view path) const {
  std::string prefix = normalisePath(path);
  if (prefix != "/") prefix += "/";
  std::vector<std::string> names;
  auto collect = [&](const auto& map) {
    for (auto it = map.lower_bound(prefix); it != map.end() && startsWithPath(it->first, prefix);
         ++it) {
      std::string_view rest = std::string_view(it->first).substr(prefix.size());
      const std::string name(rest.substr(0, rest.find('/')));
      if (!name.empty() && (names.empty() || names.back() != name)) names.push_back(name);
    }
  };
  collect(files_);
  collect(links_);
  if (names.empty())
    return Error{ErrorCode::NotFound, std::string(path) + ": No such file or directory"};
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Result<std::string> MemoryFilesystem::readLink(std::string_view path) const {
  auto it = links_.find(normalisePath(path));
  if (it == links_.end())
    return Error{ErrorCode::NotFound, std::string(path) + ": not a symbolic link"};
  return it->second;
}

bool MemoryFilesystem::exists(std::string_view path) const {
  return files_.count(normalisePath(path)) != 0 || links_.count(normalisePath(path)) != 0 ||
         isDirectory(path);
}

bool MemoryFilesystem::isDirectory(std::string_view path) const {
  std::string prefix = normalisePath(path);
  if (prefix != "/") prefix += "/";
  auto it = files_.lower_bound(prefix);
  if (it != files_.end() && startsWithPath(it->first, prefix)) return true;
  auto lt = links_.lower_bound(prefix);
  return lt != links_.end() && startsWithPath(lt->first, prefix);
}

Result<FileStatus> MemoryFilesystem::status(std::string_view path) const {
  FileStatus s;
  if (auto it = files_.find(normalisePath(path)); it != files_.end()) {
    s.regular = true;
    s.bytes = it->second.size();
    return s;
  }
  if (!isDirectory(path)) return Error{ErrorCode::NotFound, std::string(path)};
  s.directory = true;
  return s;
}

Result<Access> MemoryFilesystem::access(std::string_view path) const {
  if (!exists(path))
    return Error{ErrorCode::NotFound, std::string(path) + ": No such file or directory"};
  return Access{true, false};
}

Result<std::vector<std::pair<std::string, Result<std::string>>>> MemoryFilesystem::readDirFiles(
    std::string_view dir, std::size_t max_bytes_each, std::size_t max_files) const {
  auto names = listDir(dir);
  if (!names.ok()) return names.error();
  std::vector<std::pair<std::string, Result<std::string>>> out;
  for (const auto& name : *names) {
    const std::string path = std::string(dir) + "/" + name;
    if (isDirectory(path)) continue;
    if (out.size() >= max_files) break;
    out.emplace_back(name, readFile(path, max_bytes_each));
  }
  return out;
}

Result<std::vector<std::string>> MemoryFilesystem::readKmsgRecords(std::string_view path,
                                                                   std::size_t) const {
  return Error{ErrorCode::Unavailable, std::string(path) + ": not available in a pasted listing"};
}

}  // namespace ibc::os

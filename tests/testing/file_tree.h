// A dataset's files as a test sees them: a file's bytes, and a directory
// tree's content as a hash or a map, to prove that a failed command changed
// nothing.
#ifndef XWIRES_TESTS_TESTING_FILE_TREE_H_
#define XWIRES_TESTS_TESTING_FILE_TREE_H_

#include <map>
#include <string>

namespace xw::testutil {

// The bytes of `path` ("" if it cannot be read).
std::string ReadFile(const std::string& path);

// SHA-256 over every regular file's relative path, size and bytes, sorted by
// path, followed by the file count: equal iff the tree's files are identical.
std::string HashTree(const std::string& dir);

// Every regular file under `dir`: relative path -> bytes (a failing
// comparison shows which file differs).
std::map<std::string, std::string> Snapshot(const std::string& dir);

}  // namespace xw::testutil

#endif  // XWIRES_TESTS_TESTING_FILE_TREE_H_

// SPDX-License-Identifier: Apache-2.0
// What `figures --out DIR` may write: the files an earlier export listed in DIR's manifest
// and new ones, never a file of the user's and never through a linked sub-folder.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace fp8lab::exporter {

class ExportFolder {
  public:
    // Reads DIR/manifest.json when there is one. Throws options::UsageError when DIR holds a
    // manifest.json that no export wrote, or an index.html that its manifest does not list.
    explicit ExportFolder(std::filesystem::path dir);

    // Throws options::UsageError naming the first of `files` (relative to DIR) that exists and no
    // export wrote, or whose sub-folder is a link or not a folder. Call before writing any.
    void check_writable(const std::vector<std::string>& files) const;

    // What the next manifest lists as written by exports: `written` and the files earlier
    // exports wrote that are still there, sorted.
    std::vector<std::string> owned_after(const std::vector<std::string>& written) const;

  private:
    std::filesystem::path dir_;
    std::set<std::string> owned_;  // relative paths earlier manifests listed
};

}  // namespace fp8lab::exporter

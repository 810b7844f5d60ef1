// Output files (--json, --csv, --resolved-config, plots, edited configs): written whole or not at
// all, following symbolic links, never replacing a device, a pipe or a directory.
#pragma once

#include <string>

namespace gtsim {

// Writes `text` to `path` ("-" = stdout). A regular file (or a new one) is written through a
// temporary file beside it, renamed over it only when complete (symbolic links are followed: the
// file they name is replaced, not the link); a character device, FIFO or socket (/dev/null,
// /dev/stdout, a pipe) is written in place, never replaced; a directory is refused. The temporary
// file never outlives a failure. Errors (InputError) name the path and the reason.
void write_output(const std::string& path, const std::string& text);

// Before any work: refuses an output path that write_output would refuse for its kind or folder
// (a directory, a folder that does not exist), so a long run does not end in that error. "" and
// "-" pass.
void check_output_path(const std::string& path);

}  // namespace gtsim

#pragma once
#include <string>
#include <vector>

namespace soltune::cli {

int tune_command(const std::vector<std::string>& args, const std::string& command_line, const std::string& program);
int export_command(const std::vector<std::string>& args);
int devices_command(const std::vector<std::string>& args);
int kb_command(const std::vector<std::string>& args);

}  // namespace soltune::cli

#pragma once
#include <string>
#include <string_view>

namespace soltune {

// 32 hex digits of XXH3-128: identifies a template source in the knowledge base.
std::string content_hash(std::string_view text);

}  // namespace soltune

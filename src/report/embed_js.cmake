# Writes OUT, a C++ file defining soltune::report::chart_js(): the text of IN, in raw-string pieces
# small enough for any compiler.
file(READ ${IN} js)
string(LENGTH "${js}" n)
set(body "")
set(piece 16000)
set(at 0)
while(at LESS n)
  string(SUBSTRING "${js}" ${at} ${piece} part)
  string(APPEND body "  s += R\"soltune_js(${part})soltune_js\";\n")
  math(EXPR at "${at} + ${piece}")
endwhile()
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\n#include <string>\nnamespace soltune::report {\nconst std::string& chart_js() {\n  static const std::string text = [] {\n    std::string s;\n${body}    return s;\n  }();\n  return text;\n}\n}  // namespace soltune::report\n")

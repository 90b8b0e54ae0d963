# Writes OUT, a C++ file defining `const std::string& NAMESPACE::FUNC()`: the text of IN, in
# raw-string pieces small enough for any compiler.
file(READ ${IN} text)
string(LENGTH "${text}" n)
set(body "")
set(piece 16000)
set(at 0)
while(at LESS n)
  string(SUBSTRING "${text}" ${at} ${piece} part)
  string(APPEND body "  s += R\"soltune_text(${part})soltune_text\";\n")
  math(EXPR at "${at} + ${piece}")
endwhile()
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\n#include <string>\nnamespace ${NAMESPACE} {\nconst std::string& ${FUNC}() {\n  static const std::string text = [] {\n    std::string s;\n${body}    return s;\n  }();\n  return text;\n}\n}  // namespace ${NAMESPACE}\n")

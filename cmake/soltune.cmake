# soltune_library(NAME SOURCES... DEPS ...): one static library per src/ folder.
function(soltune_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(soltune_${name} STATIC ${ARG_SOURCES})
  add_library(soltune::${name} ALIAS soltune_${name})
  target_include_directories(soltune_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(soltune_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  soltune_warnings(soltune_${name})
endfunction()

function(soltune_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion -Wno-restrict)
  if(SOLTUNE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Builds a text file (built-in data: data/*.yaml) into a target as `const char* const SYMBOL` in
# namespace mrplan; CMake re-runs and the target rebuilds when the file changes.
function(mrplan_embed_text target symbol file)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  file(READ ${file} MRPLAN_EMBED_TEXT)
  set(MRPLAN_EMBED_SYMBOL ${symbol})
  file(RELATIVE_PATH MRPLAN_EMBED_FILE ${PROJECT_SOURCE_DIR} ${file})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${symbol}.cpp)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/embedded_text.cpp.in ${out} @ONLY)
  target_sources(${target} PRIVATE ${out})
endfunction()

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

# Builds every FOLDER/*.yaml into a target as `std::span<const EmbeddedFile> FUNCTION()` in
# namespace mrplan (model/embedded_files.hpp), sorted by file name; a file added or removed
# re-runs CMake.
function(mrplan_embed_folder target function folder)
  file(GLOB files CONFIGURE_DEPENDS ${folder}/*.yaml)
  list(SORT files)
  set(entries "")
  foreach(file ${files})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
    file(READ ${file} text)
    get_filename_component(stem ${file} NAME_WE)
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${file})
    string(APPEND entries "    {\"${stem}\", \"${rel}\", R\"mrplan_embedded(${text})mrplan_embedded\"},\n")
  endforeach()
  file(RELATIVE_PATH MRPLAN_EMBED_FOLDER ${PROJECT_SOURCE_DIR} ${folder})
  set(MRPLAN_EMBED_FUNCTION ${function})
  set(MRPLAN_EMBED_ENTRIES "${entries}")
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${function}.cpp)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/embedded_folder.cpp.in ${out} @ONLY)
  target_sources(${target} PRIVATE ${out})
endfunction()

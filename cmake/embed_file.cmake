# cmake -D INPUT=file -D OUTPUT=file.cpp -D FUNCTION=name [-D INLINE=a.css,b.js] -P embed_file.cmake
# Writes a C++ source defining `std::string_view minigen::FUNCTION()` that returns INPUT's bytes, so an asset (the web
# page) stays an ordinary file in the source tree and is still compiled into the binary.
#
# -D INLINE=a.css,b.js (optional): files beside INPUT that the document links — <link rel="stylesheet" href="a.css">,
# <script src="b.js"></script> — are written into it in place of the tag, so the page is still one response with no
# further request while its style and its strings are files of their own. A tag that is missing is an error.
if(DEFINED INLINE)
  file(READ "${INPUT}" document)
  get_filename_component(folder "${INPUT}" DIRECTORY)
  string(REPLACE "," ";" parts "${INLINE}")
  foreach(name IN LISTS parts)
    file(READ "${folder}/${name}" part)
    if(name MATCHES "\\.css$")
      set(tag "<link rel=\"stylesheet\" href=\"${name}\">")
      set(replacement "<style>\n${part}</style>")
    else()
      set(tag "<script src=\"${name}\"></script>")
      set(replacement "<script>\n${part}</script>")
    endif()
    string(FIND "${document}" "${tag}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${INPUT} does not hold ${tag}")
    endif()
    string(REPLACE "${tag}" "${replacement}" document "${document}")
  endforeach()
  file(WRITE "${OUTPUT}.inlined" "${document}")
  file(READ "${OUTPUT}.inlined" bytes HEX)
  file(REMOVE "${OUTPUT}.inlined")
else()
  file(READ "${INPUT}" bytes HEX)
endif()
string(LENGTH "${bytes}" hex_length)
math(EXPR length "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," initializers "${bytes}")
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){32})" "\\1\n" initializers "${initializers}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/embed_file.cmake; edit that file instead.\n"
  "#include <string_view>\n\nnamespace minigen {\nnamespace {\n\n"
  "constexpr char kBytes[${length} + 1] = {\n${initializers}'\\0'};\n\n}  // namespace\n\n"
  "std::string_view ${FUNCTION}() { return {kBytes, ${length}}; }\n\n}  // namespace minigen\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")

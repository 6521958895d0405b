# cmake -D INPUT=file -D OUTPUT=file.cpp -D FUNCTION=name -P embed_file.cmake
# Writes a C++ source defining `std::string_view minigen::FUNCTION()` that returns INPUT's bytes, so an asset (the web
# page) stays an ordinary file in the source tree and is still compiled into the binary.
file(READ "${INPUT}" bytes HEX)
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

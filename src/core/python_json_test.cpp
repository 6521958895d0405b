#include "core/python_json.h"

#include <gtest/gtest.h>

namespace minigen {
namespace {

using nlohmann::ordered_json;

// The expected strings are what python3 -c 'import json; print(json.dumps(value, ensure_ascii=False))' prints.
TEST(PythonJson, SeparatorsAndKeyOrderAsPythonWritesThem) {
  const ordered_json value = ordered_json::parse(R"({"z": 1, "a": [true, false, null, {}, []], "m": {"k": "v"}})");
  EXPECT_EQ(python_json_dumps(value), R"({"z": 1, "a": [true, false, null, {}, []], "m": {"k": "v"}})");
}

TEST(PythonJson, StringsKeepNonAsciiAndEscapeControls) {
  const ordered_json value = std::string("北京 😀 \"q\" \\ \n\r\t\b\f \x01\x1f\x7f é /");
  EXPECT_EQ(python_json_dumps(value), "\"北京 😀 \\\"q\\\" \\\\ \\n\\r\\t\\b\\f \\u0001\\u001f\x7f é /\"");
}

TEST(PythonJson, NumbersAsPythonsRepr) {
  const ordered_json value = ordered_json::parse(
      "[0, -7, 12345678901234567890, 3.0, 0.5, -2.25, 1e-07, 0.0001, 1e21, 1e16, 1e15, -1.5e15, 1234567890123456.8, "
      "-0.0, 0.1, 123.456, 5e-324, 1.7976931348623157e308, 2.5e-05]");
  EXPECT_EQ(python_json_dumps(value),
            "[0, -7, 12345678901234567890, 3.0, 0.5, -2.25, 1e-07, 0.0001, 1e+21, 1e+16, 1000000000000000.0, "
            "-1500000000000000.0, 1234567890123456.8, -0.0, 0.1, 123.456, 5e-324, 1.7976931348623157e+308, 2.5e-05]");
}

}  // namespace
}  // namespace minigen

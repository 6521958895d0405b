#pragma once
// The language of what minigen says to a person on the terminal: its error messages and the lab's progress lines.
// English unless MINIGEN_LANG starts with "zh" (zh, zh_CN.UTF-8, …) or a command was given --lang zh. Program
// output that other programs read (JSON, the API, report.json) never changes with it.
namespace minigen {

bool chinese_messages();
void set_chinese_messages(bool chinese);

}  // namespace minigen

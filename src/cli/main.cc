// `lakerun`: dispatches to the registered sub-commands (src/cli/*_command.cc).
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "lakerun/base/choices.h"
#include "lakerun/base/run_main.h"
#include "lakerun/version.h"

namespace lakerun::cli {

std::vector<Command>& MutableCommands() {
  static std::vector<Command> commands;
  return commands;
}

bool RegisterCommand(Command command) {
  MutableCommands().push_back(std::move(command));
  return true;
}

const std::vector<Command>& Commands() { return MutableCommands(); }

namespace {

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "lakerun: train deep-learning models at any scale, straight from lakehouse tables\n\n"
               "usage: lakerun <command> [options]\n\ncommands:\n");
  for (const auto& command : Commands()) {
    std::fprintf(out, "  %-16s %s\n", command.name.c_str(), command.summary.c_str());
  }
  std::fprintf(out, "\n`lakerun <command> --help` describes a command's options.\n");
}

const Command* Find(int argc, char** argv, int* words) {
  const Command* best = nullptr;
  const std::string one = argv[1];
  const std::string two = argc > 2 ? one + " " + argv[2] : "";
  for (const auto& command : Commands()) {
    if (!two.empty() && command.name == two) {
      *words = 2;
      return &command;
    }
    if (command.name == one) {
      best = &command;
      *words = 1;
    }
  }
  return best;
}

int Main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("lakerun %s\n", LAKERUN_VERSION_STRING);
    return 0;
  }
  int words = 0;
  const Command* command = Find(argc, argv, &words);
  if (command == nullptr) {
    // A group name alone ("lakerun table") lists its sub-commands.
    bool any = false;
    for (const auto& c : Commands()) {
      if (c.name.rfind(std::string(argv[1]) + " ", 0) == 0) {
        if (!any) std::fprintf(stderr, "usage: lakerun %s <sub-command>\n\n", argv[1]);
        std::fprintf(stderr, "  %-16s %s\n", c.name.c_str(), c.summary.c_str());
        any = true;
      }
    }
    if (!any) {
      std::vector<std::string> names;
      for (const auto& c : Commands()) names.push_back(c.name.substr(0, c.name.find(' ')));
      const std::optional<std::string> nearest = lakerun::NearestName(argv[1], names);
      std::fprintf(stderr, "lakerun: unknown command '%s'%s\n\n", argv[1],
                   nearest ? (" (did you mean '" + *nearest + "'?)").c_str() : "");
      PrintUsage(stderr);
    }
    return 2;
  }
  // The command sees argv[0] = "lakerun <name>" followed by its own arguments.
  std::string program = "lakerun " + command->name;
  std::vector<char*> args;
  args.push_back(program.data());
  for (int i = 1 + words; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  return command->run(static_cast<int>(args.size() - 1), args.data());
}

}  // namespace
}  // namespace lakerun::cli

// An error escaping a command prints "lakerun: error: ..." and exits 1.
int main(int argc, char** argv) { return lakerun::RunMain(argc, argv, lakerun::cli::Main); }

// The newcomer docs stay true to the code: every ```cpp block of docs/tutorial.md and docs/howto/*.md is a verbatim
// quote of a source file under examples/ (built and run by the suite), and every ```cmake block a quote of an
// example's CMakeLists.txt. Those pages, and the docs index, link only to files of the repository that exist, and
// the tutorial and the how-to pages name no web address.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun_testing/paths.h"

namespace lakerun::examples {
namespace {

struct CodeBlock {
  std::string language;  // what follows the opening fence: cpp, cmake, sh, text...
  std::string text;      // the lines between the fences, each ending with '\n'
  int line = 0;          // of the opening fence, 1-based
};

std::vector<CodeBlock> CodeBlocks(const std::string& markdown) {
  std::vector<CodeBlock> blocks;
  std::istringstream lines(markdown);
  std::string line;
  bool inside = false;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.rfind("```", 0) == 0) {
      if (!inside) blocks.push_back({line.substr(3), "", number});
      inside = !inside;
    } else if (inside) {
      blocks.back().text += line + "\n";
    }
  }
  EXPECT_FALSE(inside) << "a code block is not closed";
  return blocks;
}

// Every file under `dir` (recursively) whose name ends with one of `suffixes`, concatenated with a separator that no
// quote can span.
std::string Sources(const std::string& dir, const std::vector<std::string>& suffixes) {
  std::string all;
  for (const FileInfo& entry : LocalFileSystem().List(dir)) {
    const std::string path = JoinPath(dir, entry.name);
    if (entry.is_directory) {
      all += Sources(path, suffixes);
      continue;
    }
    for (const std::string& suffix : suffixes) {
      if (entry.name.size() >= suffix.size() &&
          entry.name.compare(entry.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        all += LocalFileSystem().ReadFile(path) + "\n\x01\n";
        break;
      }
    }
  }
  return all;
}

std::string Doc(const std::string& relative) {
  return LocalFileSystem().ReadFile(JoinPath(testing::SourceDir(), relative));
}

std::vector<std::string> NewcomerDocs() {
  std::vector<std::string> docs = {"docs/tutorial.md"};
  for (const FileInfo& entry : LocalFileSystem().List(JoinPath(testing::SourceDir(), "docs/howto"))) {
    if (!entry.is_directory && entry.name.size() > 3 && entry.name.substr(entry.name.size() - 3) == ".md") {
      docs.push_back("docs/howto/" + entry.name);
    }
  }
  return docs;
}

TEST(TutorialDocsTest, CodeBlocksQuoteTheExamples) {
  const std::string examples = JoinPath(testing::SourceDir(), "examples");
  const std::string cpp = Sources(examples, {".cc", ".h"});
  const std::string cmake = Sources(examples, {"CMakeLists.txt"});
  int quoted = 0;
  for (const std::string& doc : NewcomerDocs()) {
    for (const CodeBlock& block : CodeBlocks(Doc(doc))) {
      if (block.language != "cpp" && block.language != "cmake") continue;
      ++quoted;
      const std::string& sources = block.language == "cpp" ? cpp : cmake;
      EXPECT_NE(sources.find(block.text), std::string::npos)
          << doc << ":" << block.line << ": this ```" << block.language
          << " block is not a verbatim quote of a file under examples/ (did the code change?):\n"
          << block.text;
    }
  }
  EXPECT_GE(quoted, 6) << "the tutorial shows its code";
}

TEST(TutorialDocsTest, LinksStayInTheRepository) {
  std::vector<std::string> docs = NewcomerDocs();
  docs.push_back("docs/README.md");
  const std::regex link(R"(\]\(([^)\s]+)\))");
  for (const std::string& doc : docs) {
    const std::string text = Doc(doc);
    const std::string dir = DirName(JoinPath(testing::SourceDir(), doc));
    for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator(); ++it) {
      std::string target = (*it)[1];
      EXPECT_EQ(target.find("://"), std::string::npos) << doc << " links outside the repository: " << target;
      target = target.substr(0, target.find('#'));
      if (target.empty()) continue;  // an anchor in the same page
      EXPECT_TRUE(LocalFileSystem().Exists(JoinPath(dir, target))) << doc << " links to a missing file: " << target;
    }
    if (doc != "docs/README.md") {
      EXPECT_EQ(text.find("http://"), std::string::npos) << doc << " names a web address";
      EXPECT_EQ(text.find("https://"), std::string::npos) << doc << " names a web address";
    }
  }
}

}  // namespace
}  // namespace lakerun::examples

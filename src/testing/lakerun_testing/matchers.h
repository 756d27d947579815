// gtest helpers shared by lakerun's tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

/// Expects `statement` to throw `ExceptionType` whose what() contains every given substring.
///   EXPECT_THROW_WITH(reader.Read(), lakerun::CorruptDataError, "row group 3", "column 'x'");
#define EXPECT_THROW_WITH(statement, ExceptionType, ...)                                 \
  do {                                                                                   \
    bool lakerun_thrown_ = false;                                                        \
    try {                                                                                \
      statement;                                                                         \
    } catch (const ExceptionType& e) {                                                   \
      lakerun_thrown_ = true;                                                            \
      for (const std::string& part : std::initializer_list<std::string>{__VA_ARGS__}) {  \
        EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr(part));                  \
      }                                                                                  \
    } catch (const std::exception& e) {                                                  \
      ADD_FAILURE() << "expected " #ExceptionType ", got another exception: " << e.what(); \
      lakerun_thrown_ = true;                                                            \
    }                                                                                    \
    if (!lakerun_thrown_) ADD_FAILURE() << #statement " did not throw " #ExceptionType;  \
  } while (false)

// Internal: the tokenizer of the query filter language (filter_parser.h).
#ifndef XWIRES_DATASET_QUERY_FILTER_LEXER_H_
#define XWIRES_DATASET_QUERY_FILTER_LEXER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "xwires/core/status.h"

namespace xw::filter {

enum class Tok {
  kEnd,
  kLParen,
  kRParen,
  kAnd,
  kOr,
  kNot,
  kOp,
  kNumber,
  kString,
  kWord
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // operator, word, string contents or number spelling
  double number = 0;
  size_t pos = 0;  // 1-based column
};

// Splits the text into tokens ending with one kEnd; InvalidArgument naming the
// offending character, number or string and its position.
Result<std::vector<Token>> Lex(const std::string& s);

// " at position N".
std::string At(size_t pos);
// "'text'" or "end of expression".
std::string Describe(const Token& t);
// ASCII lower case.
std::string Lower(std::string s);

}  // namespace xw::filter

#endif  // XWIRES_DATASET_QUERY_FILTER_LEXER_H_

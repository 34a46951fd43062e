#include "filter_lexer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace xw::filter {

namespace {

bool IdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '-';
}

}  // namespace

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string At(size_t pos) { return " at position " + std::to_string(pos); }

// Splits the text into tokens; errors name the offending character.
Result<std::vector<Token>> Lex(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  while (true) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    Token t;
    t.pos = i + 1;
    if (i >= s.size()) {
      out.push_back(t);
      return out;
    }
    char c = s[i];
    auto two = s.substr(i, 2);
    if (c == '(' || c == ')') {
      t.kind = c == '(' ? Tok::kLParen : Tok::kRParen;
      t.text = std::string(1, c);
      ++i;
    } else if (two == "&&" || two == "||") {
      t.kind = two == "&&" ? Tok::kAnd : Tok::kOr;
      t.text = two;
      i += 2;
    } else if (two == "<=" || two == ">=" || two == "==" || two == "!=" ||
               two == "<>") {
      t.kind = Tok::kOp;
      t.text = two;
      i += 2;
    } else if (c == '<' || c == '>' || c == '=') {
      t.kind = Tok::kOp;
      t.text = std::string(1, c);
      ++i;
    } else if (c == '!') {
      t.kind = Tok::kNot;
      t.text.assign(1, '!');
      ++i;
    } else if (c == '\'' || c == '"') {
      size_t end = s.find(c, i + 1);
      if (end == std::string::npos) {
        return Status::InvalidArgument("unterminated string starting" +
                                       At(i + 1));
      }
      t.kind = Tok::kString;
      t.text = s.substr(i + 1, end - i - 1);
      i = end + 1;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' ||
               ((c == '-' || c == '+') && i + 1 < s.size() &&
                (std::isdigit(static_cast<unsigned char>(s[i + 1])) ||
                 s[i + 1] == '.'))) {
      char* end = nullptr;
      t.number = std::strtod(s.c_str() + i, &end);
      size_t len = end - (s.c_str() + i);
      size_t stop = i + len;
      while (stop < s.size() && IdentChar(s[stop])) ++stop;
      if (len == 0 || stop != i + len) {
        return Status::InvalidArgument("malformed number '" +
                                       s.substr(i, std::max(stop, i + 1) - i) +
                                       "'" + At(i + 1));
      }
      t.kind = Tok::kNumber;
      t.text = s.substr(i, len);
      i += len;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t stop = i;
      while (stop < s.size() && IdentChar(s[stop])) ++stop;
      t.text = s.substr(i, stop - i);
      std::string k = Lower(t.text);
      t.kind = k == "and"   ? Tok::kAnd
               : k == "or"  ? Tok::kOr
               : k == "not" ? Tok::kNot
                            : Tok::kWord;
      i = stop;
    } else {
      return Status::InvalidArgument(std::string("unexpected character '") + c +
                                     "'" + At(i + 1));
    }
    out.push_back(t);
  }
}

std::string Describe(const Token& t) {
  return t.kind == Tok::kEnd ? "end of expression" : "'" + t.text + "'";
}

}  // namespace xw::filter

#include "filter_parser.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "dataset/store/degenerate_sql.h"
#include "filter_lexer.h"
#include "setting_fields.h"

namespace xw::filter {

namespace {

struct Plain {
  const char* sql;
  bool numeric;
  int dim;
};

const std::map<std::string, Plain>& PlainFields() {
  static const std::map<std::string, Plain> f = {
      {"lr", {"t.lr", true, kLr}},
      {"learning_rate", {"t.lr", true, kLr}},
      {"adam_eps", {"t.adam_eps", true, kAdamEps}},
      {"adam_epsilon", {"t.adam_eps", true, kAdamEps}},
      {"eps", {"t.adam_eps", true, kAdamEps}},
      {"beta1", {"t.beta1", true, -1}},
      {"beta2", {"t.beta2", true, -1}},
      {"weight_decay", {"t.weight_decay", true, -1}},
      {"wd", {"t.weight_decay", true, -1}},
      {"batch_size", {"t.batch_size", true, kBatchSize}},
      {"bs", {"t.batch_size", true, kBatchSize}},
      {"epochs", {"t.epochs", true, kEpochs}},
      {"seed", {"t.seed", true, -1}},
      {"diff", {"t.divergence", true, kDivergence}},
      {"divergence", {"t.divergence", true, kDivergence}},
      {"accuracy_diff", {"t.divergence", true, kDivergence}},
      {"id", {"t.id", true, -1}},
      {"search_id", {"t.search_id", true, -1}},
      {"arch", {"t.arch", false, -1}},
      {"data", {"t.data_spec", false, -1}},
      {"data_spec", {"t.data_spec", false, -1}},
      {"status", {"t.status", false, -1}},
      {"external_id", {"t.external_id", false, -1}},
      {"name", {"t.external_id", false, -1}},
      // Replica statistics (replicas.h): the trial's row with the highest
      // first_replica, the latest of those (a search's confirmation over
      // fresh replicas wins over its selection).
      {"verdict", {"(SELECT s.verdict FROM replica_stats s WHERE s.trial_id = t.id "
                   "ORDER BY s.first_replica DESC, s.id DESC LIMIT 1)", false, -1}},
      {"p_value", {"(SELECT s.p_value FROM replica_stats s WHERE s.trial_id = t.id "
                   "ORDER BY s.first_replica DESC, s.id DESC LIMIT 1)", true, -1}},
      {"diff_lcb", {"(SELECT s.diff_lcb FROM replica_stats s WHERE s.trial_id = t.id "
                    "ORDER BY s.first_replica DESC, s.id DESC LIMIT 1)", true, -1}},
      {"noise_sd", {"(SELECT s.noise_sd FROM replica_stats s WHERE s.trial_id = t.id "
                    "ORDER BY s.first_replica DESC, s.id DESC LIMIT 1)", true, -1}},
      // Degenerate models (degenerate.h): 1, 0 or unknown.
      {"collapsed", {TrialFlagSql(DegenerateFlag::kCollapsed).c_str(), true, -1}},
      {"at_chance", {TrialFlagSql(DegenerateFlag::kAtChance).c_str(), true, -1}},
      {"provenance",
       {"(SELECT description FROM provenance WHERE id = t.provenance_id)",
        false, -1}},
  };
  return f;
}

// Per-profile fields: prefix -> models column. Longest prefixes first.
const std::vector<std::pair<std::string, std::string>>& ProfileFields() {
  static const std::vector<std::pair<std::string, std::string>> f = {
      {"train_loss_", "train_loss"}, {"train_acc_", "train_acc"},
      {"test_loss_", "test_loss"},   {"test_acc_", "test_acc"},
      {"loss_", "test_loss"},        {"acc_", "test_acc"},
  };
  return f;
}

std::string KnownFieldList() {
  std::string s;
  for (const auto& [name, f] : PlainFields()) s += name + ", ";
  return s +
         "acc_<profile>, train_acc_<profile>, loss_<profile>, "
         "train_loss_<profile>, " + SettingFieldList();
}

// Recursive-descent parser producing SQL text and parameters directly.
class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : toks_(std::move(toks)) {}

  Result<Condition> ParseAll() {
    Condition c;
    XW_RETURN_IF_ERROR(ParseOr(c, /*top=*/true));
    if (Peek().kind != Tok::kEnd) {
      const Token& t = Peek();
      if (t.kind == Tok::kRParen)
        return Status::InvalidArgument("unmatched ')'" + At(t.pos));
      return Status::InvalidArgument(
          "unexpected " + Describe(t) + At(t.pos) +
          ": expected 'and', 'or' or end of expression");
    }
    return c;
  }

 private:
  const Token& Peek() const { return toks_[i_]; }
  const Token& Next() { return toks_[i_ < toks_.size() - 1 ? i_++ : i_]; }

  // `top` is true while we are inside the top-level conjunction, where the
  // comparisons bound the box.
  Status ParseOr(Condition& c, bool top) {
    std::vector<Condition> terms(1);
    XW_RETURN_IF_ERROR(ParseAnd(terms[0], top));
    while (Peek().kind == Tok::kOr) {
      Next();
      terms.emplace_back();
      XW_RETURN_IF_ERROR(ParseAnd(terms.back(), false));
    }
    if (terms.size() == 1) {
      c = std::move(terms[0]);
      return Status::OK();
    }
    c = Condition();  // an 'or' bounds nothing
    c.sql = "(";
    for (size_t k = 0; k < terms.size(); ++k) {
      if (k) c.sql += " OR ";
      c.sql += terms[k].sql;
      c.params.insert(c.params.end(), terms[k].params.begin(),
                      terms[k].params.end());
    }
    c.sql += ")";
    return Status::OK();
  }

  Status ParseAnd(Condition& c, bool top) {
    XW_RETURN_IF_ERROR(ParseUnary(c, top));
    while (Peek().kind == Tok::kAnd) {
      Next();
      Condition rhs;
      XW_RETURN_IF_ERROR(ParseUnary(rhs, top));
      c.And(rhs);
    }
    return Status::OK();
  }

  Status ParseUnary(Condition& c, bool top) {
    const Token& t = Peek();
    if ((t.kind == Tok::kNot || t.kind == Tok::kLParen) && depth_ >= kMaxNesting) {
      return Status::InvalidArgument("filter nested deeper than " +
                                     std::to_string(kMaxNesting) + " levels" + At(t.pos));
    }
    if (t.kind == Tok::kNot) {
      Next();
      Condition inner;
      ++depth_;
      Status s = ParseUnary(inner, false);
      --depth_;
      XW_RETURN_IF_ERROR(s);
      c = Condition();
      c.sql = "(NOT " + inner.sql + ")";
      c.params = std::move(inner.params);
      return Status::OK();
    }
    if (t.kind == Tok::kLParen) {
      size_t open = t.pos;
      Next();
      Condition inner;
      ++depth_;
      Status s = ParseOr(inner, top);
      --depth_;
      XW_RETURN_IF_ERROR(s);
      if (Peek().kind != Tok::kRParen) {
        return Status::InvalidArgument("missing ')' for '(' at position " +
                                       std::to_string(open) + "; found " +
                                       Describe(Peek()) + At(Peek().pos));
      }
      Next();
      c = std::move(inner);
      c.sql = "(" + c.sql + ")";
      return Status::OK();
    }
    return ParseComparison(c, top);
  }

  Status ParseComparison(Condition& c, bool top) {
    if (++comparisons_ > kMaxComparisons) {
      return Status::InvalidArgument("filter has more than " +
                                     std::to_string(kMaxComparisons) + " comparisons" +
                                     At(Peek().pos));
    }
    const Token ft = Next();
    if (ft.kind != Tok::kWord) {
      return Status::InvalidArgument("expected a field name" + At(ft.pos) +
                                     ", found " + Describe(ft));
    }
    Result<Field> field = ResolveField(ft.text);
    if (!field.ok()) {
      return Status::InvalidArgument("unknown field '" + ft.text + "'" +
                                     At(ft.pos) +
                                     " (known: " + KnownFieldList() + ")");
    }
    if (Peek().kind == Tok::kWord && Lower(Peek().text) == "is") {
      return ParseIsNull(c, *field);
    }
    const Token op = Next();
    if (op.kind != Tok::kOp) {
      return Status::InvalidArgument(
          "expected a comparison operator (<, <=, >, >=, =, !=) after '" +
          ft.text + "'" + At(op.pos) + ", found " + Describe(op));
    }
    const Token v = Next();
    std::string sql_op = op.text == "=="   ? "="
                         : op.text == "<>" ? "!="
                                           : op.text;
    c = Condition();
    c.params = field->params;
    if (field->numeric) {
      double x = 0;
      if (v.kind == Tok::kNumber) {
        x = v.number;
      } else if (v.kind == Tok::kWord && IsSpecialNumber(v.text, &x)) {
      } else {
        return Status::InvalidArgument("expected a number for field '" +
                                       ft.text + "'" + At(v.pos) + ", found " +
                                       Describe(v));
      }
      c.params.push_back(x);
      if (top && field->index_dim >= 0) Bound(c, field->index_dim, sql_op, x);
    } else {
      if (v.kind != Tok::kString && v.kind != Tok::kWord) {
        return Status::InvalidArgument("expected text for field '" + ft.text +
                                       "'" + At(v.pos) + ", found " +
                                       Describe(v));
      }
      if (sql_op != "=" && sql_op != "!=") {
        return Status::InvalidArgument("text field '" + ft.text +
                                       "' only supports = and !=" + At(op.pos));
      }
      c.params.push_back(v.text);
    }
    c.sql = field->sql + " " + sql_op + " ?";
    return Status::OK();
  }

  // FIELD is [not] null: whether the value is unknown (NaN / missing).
  Status ParseIsNull(Condition& c, const Field& field) {
    Next();  // "is"
    bool negate = Peek().kind == Tok::kNot;
    if (negate) Next();
    const Token n = Next();
    if (n.kind != Tok::kWord || Lower(n.text) != "null") {
      return Status::InvalidArgument("expected 'null' after 'is'" + At(n.pos) +
                                     ", found " + Describe(n));
    }
    c = Condition();
    c.params = field.params;
    c.sql = field.sql + (negate ? " IS NOT NULL" : " IS NULL");
    return Status::OK();
  }

  static bool IsSpecialNumber(const std::string& w, double* x) {
    std::string k = Lower(w);
    if (k == "inf" || k == "infinity")
      *x = INFINITY;
    else if (k == "nan")
      *x = NAN;
    else
      return false;
    return true;
  }

  static void Bound(Condition& c, int dim, const std::string& op, double x) {
    if (std::isnan(x)) return;
    if (op == ">" || op == ">=" || op == "=")
      c.lo[dim] = std::max(c.lo[dim], x);
    if (op == "<" || op == "<=" || op == "=")
      c.hi[dim] = std::min(c.hi[dim], x);
  }

  std::vector<Token> toks_;
  size_t i_ = 0;
  int depth_ = 0;        // open '(' and 'not' around the current token
  int comparisons_ = 0;  // comparisons parsed so far
};

}  // namespace

void Condition::And(const Condition& o) {
  if (o.sql == "1") return;
  sql = sql == "1" ? o.sql : sql + " AND " + o.sql;
  params.insert(params.end(), o.params.begin(), o.params.end());
  for (int d = 0; d < kNumDims; ++d) {
    lo[d] = std::max(lo[d], o.lo[d]);
    hi[d] = std::min(hi[d], o.hi[d]);
  }
}

Result<Field> ResolveField(const std::string& name_in) {
  std::string name = Lower(name_in);
  auto it = PlainFields().find(name);
  if (it != PlainFields().end()) {
    return Field{name, it->second.sql, {}, it->second.numeric, it->second.dim};
  }
  if (auto setting = SettingField(name, name_in)) return *setting;
  for (const auto& [prefix, column] : ProfileFields()) {
    if (name.size() > prefix.size() &&
        name.compare(0, prefix.size(), prefix) == 0) {
      // Profile names keep their case (they are data, bound as a parameter).
      std::string profile = name_in.substr(prefix.size());
      return Field{
          name,
          "(SELECT m." + column +
              " FROM models m WHERE m.trial_id = t.id AND m.profile = ?)",
          {profile},
          true,
          -1};
    }
  }
  return Status::InvalidArgument("unknown field '" + name_in +
                                 "' (known: " + KnownFieldList() + ")");
}

Result<Condition> Parse(const std::string& text) {
  if (text.size() > kMaxFilterBytes) {
    return Status::InvalidArgument("filter is " + std::to_string(text.size()) +
                                   " bytes long, more than the limit of " +
                                   std::to_string(kMaxFilterBytes));
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return Condition();
  XW_ASSIGN_OR_RETURN(std::vector<Token> toks, Lex(text));
  Parser p(std::move(toks));
  return p.ParseAll();
}

Result<Condition> Range(const std::string& field_name, double lo, double hi) {
  XW_ASSIGN_OR_RETURN(Field f, ResolveField(field_name));
  if (!f.numeric)
    return Status::InvalidArgument("range on text field '" + field_name + "'");
  if (std::isnan(lo) || std::isnan(hi) || lo > hi) {
    return Status::InvalidArgument("empty or NaN range for field '" +
                                   field_name + "'");
  }
  Condition c;
  std::vector<std::string> parts;
  if (std::isfinite(lo)) {
    parts.push_back(f.sql + " >= ?");
    c.params.insert(c.params.end(), f.params.begin(), f.params.end());
    c.params.push_back(lo);
  }
  if (std::isfinite(hi)) {
    parts.push_back(f.sql + " <= ?");
    c.params.insert(c.params.end(), f.params.begin(), f.params.end());
    c.params.push_back(hi);
  }
  if (parts.empty()) return c;
  c.sql =
      parts.size() == 1 ? parts[0] : "(" + parts[0] + " AND " + parts[1] + ")";
  if (f.index_dim >= 0) {
    c.lo[f.index_dim] = lo;
    c.hi[f.index_dim] = hi;
  }
  return c;
}

}  // namespace xw::filter

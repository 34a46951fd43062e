// The store's value gate (dataset/store/trial_rules.h): every rule rejects a trial
// through Dataset::AddTrials (the path train, search, import, bundle import
// and merge all take) with a message naming the trial, model, field and
// value, and a rejected call leaves the dataset's files byte-identical.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "testing/trial_builder.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

TrialRecord Good() {
  TrialRecord t = testutil::BaseTrial({.arch = "simple_cnn",
                                       .adam_eps = 1e-8,
                                       .epochs = 2,
                                       .provenance = "trial_rules_test"});
  t.external_id = "good";
  for (ModelRecord& m : t.models) {
    m.test_acc = m.profile == "tf" ? 0.5 : 0.25;
    m.train_acc = 0.6;
    m.test_loss = 1.5;
    m.train_loss = 1.4;
    m.param_count = 10;
    m.curves = {{1, 2.0, 1.9, 0.2, 2.1, 0.15}, {2, 1.5, 1.4, 0.3, 1.6, 0.25}};
  }
  t.divergence = 0.25;
  return t;
}

struct Case {
  const char* name;
  std::function<void(TrialRecord&)> spoil;
  const char* message;
};

const double kInf = std::numeric_limits<double>::infinity();

TEST(TrialRulesTest, EveryRuleRejectsAndChangesNothing) {
  const Case cases[] = {
      {"negative lr", [](TrialRecord& t) { t.lr = -0.01; }, "lr -0.01 is not a finite number > 0"},
      {"zero lr", [](TrialRecord& t) { t.lr = 0; }, "lr 0 is not a finite number > 0"},
      {"infinite eps", [](TrialRecord& t) { t.adam_eps = kInf; }, "adam_eps inf is not a finite"},
      {"beta1 = 1", [](TrialRecord& t) { t.beta1 = 1; }, "beta1 1 is not in [0, 1)"},
      {"negative beta2", [](TrialRecord& t) { t.beta2 = -0.1; }, "beta2 -0.1 is not in [0, 1)"},
      {"negative weight decay", [](TrialRecord& t) { t.weight_decay = -1; },
       "weight_decay -1 is not a finite number >= 0"},
      {"negative batch", [](TrialRecord& t) { t.batch_size = -4; }, "batch_size -4 is negative"},
      {"negative epochs", [](TrialRecord& t) { t.epochs = -1; }, "epochs -1 is negative"},
      {"accuracy 2.5", [](TrialRecord& t) { t.models[1].test_acc = 2.5; t.divergence = 2.25; },
       "model 'tf': test_acc 2.5 is not an accuracy in [0, 1]"},
      {"accuracy -0.3", [](TrialRecord& t) { t.models[0].train_acc = -0.3; },
       "model 'torch': train_acc -0.3 is not an accuracy"},
      {"unknown accuracy of a finished model",
       [](TrialRecord& t) { t.models[0].test_acc = kUnknown; },
       "model 'torch': test_acc is unknown but the status is ok"},
      {"infinite loss of an ok model", [](TrialRecord& t) { t.models[0].test_loss = kInf; },
       "model 'torch': test_loss inf is not finite"},
      {"curve accuracy", [](TrialRecord& t) { t.models[1].curves[1].test_acc = 1.5; },
       "model 'tf': curves epoch 2: test_acc 1.5 is not an accuracy"},
      {"curve order", [](TrialRecord& t) { t.models[1].curves[0].epoch = 2; },
       "model 'tf': curves epoch 1: numbered 2 (epochs must be 1, 2, ... in order)"},
      {"curve loss", [](TrialRecord& t) { t.models[0].curves[0].train_loss_mean = -kInf; },
       "curves epoch 1: train_loss_mean -inf is not finite"},
      {"divergence", [](TrialRecord& t) { t.divergence = 0.9; },
       "divergence 0.9 is not the largest |test_acc difference| 0.25"},
      {"objective not recorded",
       [](TrialRecord& t) {
         t.extra_json = R"({"objectives": {"abs_acc_diff": 0.25, "disagreement": 0.4}})";
         t.divergence = 0.3;
       },
       "divergence 0.3 is none of the recorded objectives"},
  };
  testutil::TempDir tmp;
  const std::string dir = tmp.path() + "/ds";
  {
    auto ds = Dataset::Open(dir, OpenMode::kCreate);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ASSERT_TRUE((*ds)->AddTrial(Good()).ok());
  }
  const std::string before = testutil::HashTree(dir);
  for (const Case& c : cases) {
    TrialRecord t = Good();
    t.external_id = c.name;
    c.spoil(t);
    auto ds = Dataset::Open(dir, OpenMode::kReadWrite);
    ASSERT_TRUE(ds.ok());
    auto r = (*ds)->AddTrials({Good(), t});
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << c.name;
    EXPECT_NE(r.status().message().find("trial 1 (" + std::string(c.name) + ")"),
              std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos)
        << c.name << ": " << r.status().message();
    ds->reset();
    EXPECT_EQ(testutil::HashTree(dir), before) << c.name << " changed the dataset";
  }
}

TEST(TrialRulesTest, UnknownValuesAndDivergedModelsPass) {
  testutil::TempDir tmp;
  auto ds = Dataset::Open(tmp.path() + "/ds", OpenMode::kCreate);
  ASSERT_TRUE(ds.ok());
  TrialRecord t = Good();
  t.lr = kUnknown;             // hyperparameters a run does not use
  t.weight_decay = kUnknown;
  t.models[0].status = "diverged";
  t.models[0].train_loss = kInf;  // a diverged model may end at inf
  t.models[0].test_loss = kUnknown;
  t.models[1].curves[0].test_acc = kUnknown;
  t.extra_json = R"({"objectives": {"abs_acc_diff": 0.25, "disagreement": 0.4}})";
  t.divergence = 0.4;  // the search objective
  EXPECT_TRUE((*ds)->AddTrial(t).ok());
  TrialRecord failed = Good();
  failed.models[1].status = "failed";
  failed.models[1].test_acc = kUnknown;
  failed.divergence = kUnknown;
  EXPECT_TRUE((*ds)->AddTrial(failed).ok());
}

}  // namespace
}  // namespace xw

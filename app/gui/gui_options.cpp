// SPDX-License-Identifier: MIT
#include "gui/gui_options.h"

#include <QCommandLineParser>
#include <cmath>

#include "common/bytes.h"
#include "common/error.h"
#include "gui/view_registry.h"
#include "options/args.h"
#include "options/file_options.h"
#include "options/network_options.h"
#include "options/plan_options.h"

namespace swapscope::gui {

Network loadNetworkArgs(const std::vector<std::string>& args) {
  cli::ArgParser parser("", "");
  cli::addNetworkOptions(parser);
  parser.parse(args);
  return cli::loadNetwork(parser);
}

GuiOptions parseGuiOptions(const QStringList& arguments) {
  QCommandLineParser cli;
  cli.setApplicationDescription(
      "Swapscope workbench: plan the minibatch and swap set of a network under a GPU memory\n"
      "budget from a profiled run database, and see memory, streams, trade-off and layers.");
  const QCommandLineOption help({"h", "help"}, "show this help");
  const QCommandLineOption model("model", "zoo model to plan (transferred curves)", "NAME");
  const QCommandLineOption net("net", "network JSON file to plan (transferred curves)", "FILE");
  const QCommandLineOption onnx("onnx", "ONNX model exported from PyTorch to plan (docs/onnx.md)",
                                "FILE");
  const QCommandLineOption input("input", "input size of a zoo or ONNX model, e.g. 3x224x224",
                                 "CxHxW");
  const QCommandLineOption classes("classes", "class count of a zoo model", "N");
  const QCommandLineOption budget("budget", "memory budget, e.g. 256MiB, 1.5GB", "SIZE");
  const QCommandLineOption budgetGib("budget-gib", "memory budget in GiB", "G");
  const QCommandLineOption batch("batch", "fix the minibatch k instead of searching", "K");
  const QCommandLineOption policy(
      "policy", QString::fromStdString(joinPolicyNames(PolicyRows::All, ", ", " or ")), "P");
  const QCommandLineOption mode("mode", "argmin or paper", "M");
  const QCommandLineOption view("view", viewChoices(), "VIEW");
  const QCommandLineOption compare(
      "compare", "open another run database beside the first, for Compare and Timeline (repeat)",
      "DB.swapdb");
  const QCommandLineOption timelineK("k", "the recorded k the Timeline shows (default: largest)",
                                     "K");
  const QCommandLineOption select("select", "select a layer by name or index", "LAYER");
  const QCommandLineOption exportPlan(
      "export-plan", "write the plan JSON to FILE and exit; - prints it to standard output",
      "FILE");
  const QCommandLineOption shot("screenshot",
                                "render the window to FILE (.png, .pdf or .svg) and exit; - is "
                                "refused, ./- names a file called '-'",
                                "FILE");
  const QCommandLineOption force("force", "replace existing output files");
  cli.addOptions({help, model, net, onnx, input, classes, budget, budgetGib, batch, policy, mode,
                  view, select, compare, timelineK, exportPlan, shot, force});
  cli.addPositionalArgument("DB.swapdb", "a run database made by `swapscope profile`");
  GuiOptions o;
  if (!cli.parse(arguments)) throwBadInput(cli.errorText().toStdString());
  // As the CLI's options: each at most once (a repeated one silently took its last value).
  for (const QCommandLineOption* opt :
       {&model, &net, &onnx, &input, &classes, &budget, &budgetGib, &batch, &policy, &mode, &view,
        &select, &timelineK, &exportPlan, &shot}) {
    if (cli.values(*opt).size() > 1)
      throwBadInput("option '--" + opt->names().front().toStdString() + "' is given twice");
  }
  if (cli.isSet(help)) {
    o.help = true;
    o.help_text = cli.helpText();
    return o;
  }
  const QStringList positional = cli.positionalArguments();
  if (positional.size() > 1)
    throwBadInput("give at most one run database, got " + std::to_string(positional.size()));
  if (!positional.isEmpty()) o.db = positional.front();
  // The app reads its inputs by name, and reads a network file again when its source changes:
  // none of them is standard input.
  cli::refuseStandardInput(o.db.toStdString(), "DB.swapdb", "a run database",
                           cli::kRunDatabaseIsReadInPlace);
  for (const QString& path : cli.values(compare))
    cli::refuseStandardInput(path.toStdString(), "--compare", "a run database",
                             cli::kRunDatabaseIsReadInPlace);
  cli::refuseStandardInput(cli.value(net).toStdString(), "--net", "a network file",
                           "the app reads it again as the network's source changes");
  cli::refuseStandardInput(cli.value(onnx).toStdString(), "--onnx", "an ONNX model",
                           cli::kOnnxModelIsReadInPlace);
  for (const QCommandLineOption* opt : {&model, &net, &onnx, &input, &classes}) {
    if (!cli.isSet(*opt)) continue;
    o.network_args.push_back("--" + opt->names().front().toStdString());
    o.network_args.push_back(cli.value(*opt).toStdString());
  }
  // --budget-gib G is --budget GGiB, with --budget's reasons (options/plan_options.h).
  const auto valueOf = [&](const QCommandLineOption& opt) -> std::optional<std::string> {
    if (!cli.isSet(opt)) return std::nullopt;
    return cli.value(opt).toStdString();
  };
  if (const auto b = cli::budgetFromOptions(valueOf(budget), valueOf(budgetGib))) o.budget = *b;
  // The CLI's parsers: the same limit and the same reasons as `swapscope plan --batch`.
  if (cli.isSet(batch)) o.batch = cli::parseBatch(cli.value(batch).toStdString(), "--batch");
  if (cli.isSet(policy))
    o.policy = cli::parsePolicy(cli.value(policy).toStdString(), PolicyRows::All);
  if (cli.isSet(mode)) {
    o.mode = cli::parsePlanMode(cli.value(mode).toStdString());
    cli::checkBatchWithMode(o.batch, o.mode);
  }
  if (cli.isSet(view)) {
    o.view = cli.value(view);
    if (!viewNames().contains(o.view))
      throwBadInput("--view: unknown view '" + o.view.toStdString() + "' (" +
                    viewNames().join(", ").toStdString() + ")");
  }
  o.select = cli.value(select);
  o.compare = cli.values(compare);
  if (!o.compare.isEmpty() && o.db.isEmpty())
    throwBadInput(
        "--compare needs a run database to compare with (swapscope-gui A.swapdb "
        "--compare B.swapdb)");
  if (cli.isSet(timelineK)) {
    const std::int64_t k = cli::parseBatch(cli.value(timelineK).toStdString(), "--k");
    if (o.db.isEmpty()) throwBadInput("--k needs a run database (swapscope-gui DB.swapdb --k K)");
    o.timeline_k = k;
  }
  // As the CLI's outputs: an empty name is refused (it would leave the app running headless
  // with nothing to write).
  if (cli.isSet(exportPlan) && cli.value(exportPlan).isEmpty())
    throwBadInput("the plan file --export-plan: the file name is empty");
  if (cli.isSet(shot) && cli.value(shot).isEmpty())
    throwBadInput("the screenshot --screenshot: the file name is empty");
  if (cli.value(shot) == cli::kStandardOutput)
    throwBadInput(
        "--screenshot -: - would be standard output, but a screenshot is an image whose format "
        "its file name's extension chooses; name a file (./- names a file called '-')");
  o.export_plan = cli.value(exportPlan);
  o.screenshot = cli.value(shot);
  o.force = cli.isSet(force);
  if (!o.export_plan.isEmpty() && o.db.isEmpty())
    throwBadInput("--export-plan needs a run database to plan from (swapscope-gui DB.swapdb ...)");
  return o;
}

}  // namespace swapscope::gui

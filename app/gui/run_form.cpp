// SPDX-License-Identifier: MIT
#include "gui/run_form.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>

#include "runtime/device.h"

namespace swapscope::gui {
namespace {

/// An output-database row: a line edit and a Browse… button.
QWidget* outputRow(QWidget* parent, QLineEdit* edit) {
  auto* row = new QWidget(parent);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* browse = new QPushButton(QObject::tr("Browse..."), row);
  layout->addWidget(edit, 1);
  layout->addWidget(browse);
  QObject::connect(browse, &QPushButton::clicked, row, [row, edit] {
    // The dialog asks before an existing file is chosen.
    const QString f = QFileDialog::getSaveFileName(row, QObject::tr("Run database"), edit->text(),
                                                   QObject::tr("Run databases (*.swapdb)"));
    if (!f.isEmpty()) edit->setText(f);
  });
  return row;
}

}  // namespace

RunForm::RunForm(QWidget* parent, const QString& title, const QString& ok, int iterationsDefault,
                 const QString& dbName)
    : dialog(parent),
      form(new QFormLayout(&dialog)),
      device(new QComboBox(&dialog)),
      iterations(new QSpinBox(&dialog)),
      warmup(new QSpinBox(&dialog)),
      output(new QLineEdit(QDir::current().filePath(dbName), &dialog)),
      buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog)) {
  dialog.setWindowTitle(title);
  for (const rt::BackendInfo& b : rt::listBackends()) {
    if (b.available) device->addItem(QString::fromStdString(b.name));
  }
  iterations->setRange(1, 100000);
  iterations->setValue(iterationsDefault);
  warmup->setRange(0, 1000);
  warmup->setValue(1);
  buttons->button(QDialogButtonBox::Ok)->setText(ok);
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
}

void RunForm::addCommonRows(const QString& iterationsLabel, const QString& warmupLabel) {
  form->addRow(QObject::tr("Device"), device);
  form->addRow(iterationsLabel, iterations);
  form->addRow(warmupLabel, warmup);
  form->addRow(QObject::tr("Run database"), outputRow(&dialog, output));
  form->addRow(buttons);
}

bool confirmOutput(QWidget* parent, const QString& path, bool& force) {
  force = false;
  if (!QFileInfo::exists(path)) return true;
  const auto answer = QMessageBox::question(
      parent, QObject::tr("Replace the run database?"),
      QObject::tr("%1 exists. Replace it? Its measurements are lost.").arg(path));
  force = answer == QMessageBox::Yes;
  return force;
}

}  // namespace swapscope::gui

// SPDX-License-Identifier: MIT
/// @brief The form the Run menu's dialogs (Profile..., Run plan...) share, and the replace
/// question they ask before writing over a run database.
#pragma once

#include <QDialog>
#include <QString>

class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QLineEdit;
class QSpinBox;

namespace swapscope::gui {

/// What the Profile and Run plan dialogs share: the device (the backends this build can use
/// here), recorded and warm-up iterations, the run database and the buttons. A dialog adds its
/// own rows to `form` before addCommonRows.
struct RunForm {
  RunForm(QWidget* parent, const QString& title, const QString& ok, int iterationsDefault,
          const QString& dbName);
  /// Device, iterations, warm-up, the run database and the buttons, after the dialog's rows.
  void addCommonRows(const QString& iterationsLabel, const QString& warmupLabel);

  QDialog dialog;
  QFormLayout* form;
  QComboBox* device;
  QSpinBox* iterations;
  QSpinBox* warmup;
  QLineEdit* output;
  QDialogButtonBox* buttons;
};

/// Whether `path` may be written: a new file, or an existing one the user agrees to replace
/// (`force` then). False when the user declines.
bool confirmOutput(QWidget* parent, const QString& path, bool& force);

}  // namespace swapscope::gui

// SPDX-License-Identifier: MIT
#include "views/text_wrap.h"

#include <algorithm>

#include <qcustomplot.h>
#include <QFontMetrics>
#include <QStringList>

namespace swapscope {

QString wrapped(const QString& text, const QFontMetrics& metrics, int width) {
  QStringList lines;
  for (const QString& paragraph : text.split('\n')) {
    QString line;
    for (const QString& word : paragraph.split(' ', Qt::SkipEmptyParts)) {
      const QString longer = line.isEmpty() ? word : line + ' ' + word;
      if (!line.isEmpty() && metrics.horizontalAdvance(longer) > width) {
        lines << line;
        line = word;
      } else {
        line = longer;
      }
    }
    lines << line;
  }
  return lines.join('\n');
}

void wrapInto(QCPItemText* item, const QCPAxisRect* rect, const QString& text, int margin) {
  const int width = std::max(rect->width() - 2 * margin, 120);
  item->setText(wrapped(text, QFontMetrics(item->font()), width));
}

}  // namespace swapscope

#include "widgets/filter_edit.h"

namespace ibc::console {

FilterEdit::FilterEdit(const QString& placeholder, QWidget* parent)
    : QLineEdit(parent), help_(placeholder) {
  setPlaceholderText(placeholder);
  setClearButtonEnabled(true);
  setToolTip(placeholder);
}

void FilterEdit::setError(const QString& error) {
  if (error == error_) return;
  error_ = error;
  setStyleSheet(error.isEmpty() ? QString()
                                : QStringLiteral("QLineEdit { border: 2px solid #c62828; }"));
  setToolTip(error.isEmpty() ? help_ : error);
}

}  // namespace ibc::console

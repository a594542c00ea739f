#pragma once

// The filter box of a page (grid, findings, node): a line edit that speaks the filter
// language (filter_terms.h) and shows a term it cannot read (red frame, the reason as its
// tooltip) instead of silently showing everything.

#include <QLineEdit>

namespace ibc::console {

class FilterEdit : public QLineEdit {
  Q_OBJECT

 public:
  FilterEdit(const QString& placeholder, QWidget* parent = nullptr);
  // The reason the text could not be read; "" when it could.
  void setError(const QString& error);
  QString error() const { return error_; }

 private:
  QString error_;
  QString help_;
};

}  // namespace ibc::console

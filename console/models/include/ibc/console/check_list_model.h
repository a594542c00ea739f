#pragma once

// A list of checkable rows (the escalate page's nodes and finding codes): a model for a
// virtualised view, one small struct per row and no item objects. Each row carries the index
// it stands for (a node, a finding) and may be marked (shown in a warning colour).

#include <QAbstractListModel>
#include <QList>
#include <QString>
#include <set>
#include <vector>

namespace ibc::console {

class CheckListModel : public QAbstractListModel {
  Q_OBJECT

 public:
  struct Item {
    QString text;
    QString tooltip;
    int index = -1;  // what the row stands for: a node or a finding (report index)
    bool checked = false;
    bool marked = false;  // shown in a warning colour
  };
  enum Role { IndexRole = Qt::UserRole + 1 };

  explicit CheckListModel(QObject* parent = nullptr);

  void setItems(std::vector<Item> items);
  const std::vector<Item>& items() const { return items_; }
  // The indexes of the checked rows, in row order.
  QList<int> checkedIndexes() const;
  // Checks exactly the rows whose index is in `indexes` (one dataChanged; no checkToggled).
  void setCheckedIndexes(const std::set<int>& indexes);
  // The row of `index`, -1 when none.
  int rowOf(int index) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

 signals:
  // The engineer checked or unchecked a row (setData), not setItems/setCheckedIndexes.
  void checkToggled();

 private:
  std::vector<Item> items_;
};

}  // namespace ibc::console

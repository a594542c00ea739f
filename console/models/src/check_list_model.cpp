#include "ibc/console/check_list_model.h"

#include <QColor>

namespace ibc::console {

CheckListModel::CheckListModel(QObject* parent) : QAbstractListModel(parent) {}

void CheckListModel::setItems(std::vector<Item> items) {
  beginResetModel();
  items_ = std::move(items);
  endResetModel();
}

QList<int> CheckListModel::checkedIndexes() const {
  QList<int> out;
  for (const Item& i : items_) {
    if (i.checked) out << i.index;
  }
  return out;
}

void CheckListModel::setCheckedIndexes(const std::set<int>& indexes) {
  for (Item& i : items_) i.checked = indexes.count(i.index) > 0;
  if (!items_.empty())
    emit dataChanged(index(0), index(static_cast<int>(items_.size()) - 1), {Qt::CheckStateRole});
}

int CheckListModel::rowOf(int wanted) const {
  for (std::size_t r = 0; r < items_.size(); ++r) {
    if (items_[r].index == wanted) return static_cast<int>(r);
  }
  return -1;
}

int CheckListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(items_.size());
}

QVariant CheckListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Item& i = items_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole: return i.text;
    case Qt::ToolTipRole: return i.tooltip.isEmpty() ? QVariant() : QVariant(i.tooltip);
    case Qt::CheckStateRole: return i.checked ? Qt::Checked : Qt::Unchecked;
    case Qt::ForegroundRole: return i.marked ? QVariant(QColor(0xb0, 0x40, 0x00)) : QVariant();
    case IndexRole: return i.index;
    default: return {};
  }
}

bool CheckListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::CheckStateRole ||
      !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return false;
  Item& i = items_[static_cast<std::size_t>(index.row())];
  const bool checked = value.toInt() == Qt::Checked;
  if (checked == i.checked) return true;
  i.checked = checked;
  emit dataChanged(index, index, {Qt::CheckStateRole});
  emit checkToggled();
  return true;
}

Qt::ItemFlags CheckListModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable;
}

}  // namespace ibc::console

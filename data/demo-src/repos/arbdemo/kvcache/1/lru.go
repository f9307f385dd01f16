package kvcache

import "container/list"

type lruItem struct {
	key   string
	value any
}

type lruList struct {
	capacity int
	order    *list.List
	items    map[string]*list.Element
}

func newLRU(capacity int) *lruList {
	return &lruList{capacity: capacity, order: list.New(), items: map[string]*list.Element{}}
}

func (l *lruList) get(key string) (any, bool) {
	elem, ok := l.items[key]
	if !ok {
		return nil, false
	}
	l.order.MoveToFront(elem)
	return elem.Value.(*lruItem).value, true
}

// put inserts or updates key; it reports the evicted key, if any.
func (l *lruList) put(key string, value any) (string, bool) {
	if elem, ok := l.items[key]; ok {
		elem.Value.(*lruItem).value = value
		l.order.MoveToFront(elem)
		return "", false
	}
	l.items[key] = l.order.PushFront(&lruItem{key: key, value: value})
	if l.order.Len() <= l.capacity {
		return "", false
	}
	oldest := l.order.Back()
	l.order.Remove(oldest)
	evicted := oldest.Value.(*lruItem).key
	delete(l.items, evicted)
	return evicted, true
}

func (l *lruList) remove(key string) {
	if elem, ok := l.items[key]; ok {
		l.order.Remove(elem)
		delete(l.items, key)
	}
}

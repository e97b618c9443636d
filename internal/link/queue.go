package link

// fifo is a queue that counts the bytes it holds. It is not safe for
// concurrent use: its owner locks.
type fifo[T any] struct {
	items []T
	sizes []int
	head  int
	bytes int
}

func (q *fifo[T]) len() int { return len(q.items) - q.head }

// fits reports whether an item of size n may join: always into an empty
// queue (so one item of any allowed size gets through), else within the
// byte and item budgets.
func (q *fifo[T]) fits(n, maxBytes, maxItems int) bool {
	return q.len() == 0 || q.bytes+n <= maxBytes && q.len() < maxItems
}

func (q *fifo[T]) push(v T, n int) {
	q.items = append(q.items, v)
	q.sizes = append(q.sizes, n)
	q.bytes += n
}

func (q *fifo[T]) pop() T {
	var zero T
	v := q.items[q.head]
	q.bytes -= q.sizes[q.head]
	q.items[q.head] = zero // let it be collected
	q.head++
	if q.head == len(q.items) {
		q.items, q.sizes, q.head = q.items[:0], q.sizes[:0], 0
	} else if q.head > 64 && q.head*2 >= len(q.items) {
		// Move the live half down so the arrays stop growing.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		copy(q.sizes, q.sizes[q.head:])
		q.items, q.sizes, q.head = q.items[:n], q.sizes[:n], 0
	}
	return v
}

// reset drops everything.
func (q *fifo[T]) reset() {
	clear(q.items)
	q.items, q.sizes, q.head, q.bytes = nil, nil, 0, 0
}

// broadcast wakes every waiter on a change, like sync.Cond, but as a
// channel so that waits can also select on a context. The owner's lock
// guards it.
type broadcast struct{ ch chan struct{} }

// wait returns a channel closed at the next signal.
func (b *broadcast) wait() <-chan struct{} {
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

func (b *broadcast) signal() {
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}

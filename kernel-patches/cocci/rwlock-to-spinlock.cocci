// SPDX-License-Identifier: GPL-2.0
/// Turn one rwlock into a spinlock: the conversion of commit 10d1a0028dc4
/// ("omap: mailbox: convert rwlocks to spinlock"), for any lock, in every
/// file given (scripts/convert/convert.sh gives the lock's own file, or for
/// a global lock every file that names it, its header's extern included).
///
/// The lock is named on the command line (spatch -D lock=NAME) and is
/// matched as a variable (&NAME) or a field (&E->NAME, &E.NAME).  Readers
/// and writers alike take the spinlock, in the same context: _irq,
/// _irqsave/_irqrestore and _bh keep their meaning.  What a spinlock
/// cannot do is not rewritten, and convert.sh refuses the conversion
/// naming the line and why: a reader nested in a reader of the same lock
/// in one function (rule nested_read: a spinlock deadlocks on itself
/// there; it prints "LOCKBENCH-NESTED FILE:LINE: ..."), read_trylock (it
/// succeeds beside other readers, spin_trylock would not), the lock passed
/// or stored by address, a reader API with no spinlock twin.
//
// Confidence: High (each rule rewrites one rwlock API name to its
// spinlock twin, arguments untouched).
// Options: --no-includes --include-headers

@nested_read exists@
identifier virtual.lock;
position p1, p2;
@@
(
read_lock@p1(&lock);
|
read_lock_bh@p1(&lock);
|
read_lock_irq@p1(&lock);
|
read_lock_irqsave@p1(&lock, ...);
)
... when != read_unlock(&lock);
    when != read_unlock_bh(&lock);
    when != read_unlock_irq(&lock);
    when != read_unlock_irqrestore(&lock, ...);
(
read_lock@p2(&lock);
|
read_lock_bh@p2(&lock);
|
read_lock_irq@p2(&lock);
|
read_lock_irqsave@p2(&lock, ...);
)

@script:python depends on nested_read@
p1 << nested_read.p1;
p2 << nested_read.p2;
@@
print("LOCKBENCH-NESTED %s:%s: a reader nested in the one of line %s, in %s()"
      % (p2[0].file, p2[0].line, p1[0].line, p2[0].current_element))

@define_rwlock@
declarer name DEFINE_RWLOCK;
declarer name DEFINE_SPINLOCK;
identifier virtual.lock;
@@
- DEFINE_RWLOCK(lock);
+ DEFINE_SPINLOCK(lock);

@rwlock_var@
identifier virtual.lock;
@@
- rwlock_t lock;
+ spinlock_t lock;

@rwlock_field@
identifier virtual.lock, s;
@@
struct s {
  ...
- rwlock_t lock;
+ spinlock_t lock;
  ...
};

@rwlock_calls@
identifier virtual.lock;
expression E;
@@
(
- rwlock_init
+ spin_lock_init
|
- read_lock
+ spin_lock
|
- write_lock
+ spin_lock
|
- read_unlock
+ spin_unlock
|
- write_unlock
+ spin_unlock
|
- write_trylock
+ spin_trylock
|
- read_lock_irq
+ spin_lock_irq
|
- write_lock_irq
+ spin_lock_irq
|
- read_unlock_irq
+ spin_unlock_irq
|
- write_unlock_irq
+ spin_unlock_irq
|
- read_lock_irqsave
+ spin_lock_irqsave
|
- write_lock_irqsave
+ spin_lock_irqsave
|
- read_unlock_irqrestore
+ spin_unlock_irqrestore
|
- write_unlock_irqrestore
+ spin_unlock_irqrestore
|
- write_trylock_irqsave
+ spin_trylock_irqsave
|
- read_lock_bh
+ spin_lock_bh
|
- write_lock_bh
+ spin_lock_bh
|
- read_unlock_bh
+ spin_unlock_bh
|
- write_unlock_bh
+ spin_unlock_bh
)
  (\(&lock\|&E->lock\|&E.lock\), ...)

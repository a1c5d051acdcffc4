// SPDX-License-Identifier: GPL-2.0
/// Turn one rwlock into a spinlock: the conversion of commit 10d1a0028dc4
/// ("omap: mailbox: convert rwlocks to spinlock"), for any lock.
///
/// The lock is named on the command line (spatch -D lock=NAME) and is
/// matched as a variable (&NAME) or a field (&E->NAME, &E.NAME).  Readers
/// and writers alike take the spinlock, in the same context: _irq,
/// _irqsave/_irqrestore and _bh keep their meaning.  Whatever mention of
/// the lock is left afterwards (the lock passed as a pointer, a reader
/// API with no spinlock twin) is refused by scripts/convert/convert.sh, line by
/// line: a conversion that is not whole is not made.
//
// Confidence: High (each rule rewrites one rwlock API name to its
// spinlock twin, arguments untouched).
// Options: --no-includes --include-headers

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
- read_trylock
+ spin_trylock
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

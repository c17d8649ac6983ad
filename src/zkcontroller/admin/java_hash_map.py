"""The iteration order of a ``java.util.HashMap<String, ...>`` filled by ``put`` in a given order: `hash_map_order`.

``kafka-topics --zookeeper --describe`` prints a topic's ``Configs:`` through the admin client's ``Config``, whose
entries live in a default ``HashMap`` keyed by name, so the field follows that map's table. Replayed here as in
OpenJDK 8 to 25 (unchanged since 8; checked against JDK 17 and 25): ``hash`` folds ``String.hashCode``'s high half
into the low, a first table of 16 slots doubles once the size passes three quarters, a resize keeps each chain's
order, a chain of more than 8 doubles the table while it is under 64 slots and becomes a red-black tree bin beyond
that. A tree bin iterates its ``next`` list: a new node is linked right after its tree parent and the tree's root
is moved to the front after every insertion, so the tree itself (ordered by hash, then ``String.compareTo``) is
replayed too.
"""

from __future__ import annotations

from collections.abc import Iterable

from zkcontroller.java_hash import java_string_hash

_TREEIFY_THRESHOLD = 8
_UNTREEIFY_THRESHOLD = 6
_MIN_TREEIFY_CAPACITY = 64


class _Node:
    __slots__ = ("cmp", "hash", "key", "left", "next", "parent", "prev", "red", "right", "tree")

    def __init__(self, h: int, key: str, tree: bool = False) -> None:
        self.hash = h
        self.key = key
        self.cmp = key.encode("utf-16-be", "surrogatepass")  # String.compareTo: UTF-16 code units
        self.next: _Node | None = None
        self.prev: _Node | None = None
        self.left: _Node | None = None
        self.right: _Node | None = None
        self.parent: _Node | None = None
        self.red = False
        self.tree = tree


def _signed(h: int) -> int:
    return h - (1 << 32) if h & 0x80000000 else h


def _hash(key: str) -> int:
    """``HashMap.hash``, as Java's signed int (tree bins compare hashes signed)."""
    h = java_string_hash(key)
    return _signed(h ^ (h >> 16))


def _chain(head: _Node | None) -> list[_Node]:
    out = []
    while head is not None:
        out.append(head)
        head = head.next
    return out


def _link(nodes: list[_Node], tree: bool) -> _Node | None:
    """Nodes re-linked in this order (``untreeify`` and the resize's lo/hi lists)."""
    for i, node in enumerate(nodes):
        node.tree = tree
        node.prev = nodes[i - 1] if i else None
        node.next = nodes[i + 1] if i + 1 < len(nodes) else None
    return nodes[0] if nodes else None


def _direction(h: int, cmp: bytes, p: _Node) -> int:
    """Left (-1) or right (1) of ``p``: by hash, then ``compareTo`` (distinct keys never tie)."""
    if p.hash != h:
        return -1 if p.hash > h else 1
    return -1 if cmp < p.cmp else 1


def _rotate_left(root: _Node, p: _Node) -> _Node:
    r = p.right
    if r is None:
        return root
    p.right = rl = r.left
    if rl is not None:
        rl.parent = p
    r.parent = pp = p.parent
    if pp is None:
        root = r
        r.red = False
    elif pp.left is p:
        pp.left = r
    else:
        pp.right = r
    r.left = p
    p.parent = r
    return root


def _rotate_right(root: _Node, p: _Node) -> _Node:
    lft = p.left
    if lft is None:
        return root
    p.left = lr = lft.right
    if lr is not None:
        lr.parent = p
    lft.parent = pp = p.parent
    if pp is None:
        root = lft
        lft.red = False
    elif pp.right is p:
        pp.right = lft
    else:
        pp.left = lft
    lft.right = p
    p.parent = lft
    return root


def _balance_insertion(root: _Node, x: _Node) -> _Node:
    """``TreeNode.balanceInsertion``, step for step (the root it returns decides the list's head)."""
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        if xp is xpp.left:
            uncle = xpp.right
            if uncle is not None and uncle.red:
                uncle.red = xp.red = False
                xpp.red = True
                x = xpp
                continue
            if x is xp.right:
                x = xp
                root = _rotate_left(root, x)
                xp = x.parent
                xpp = None if xp is None else xp.parent
            if xp is not None:
                xp.red = False
                if xpp is not None:
                    xpp.red = True
                    root = _rotate_right(root, xpp)
        else:
            uncle = xpp.left
            if uncle is not None and uncle.red:
                uncle.red = xp.red = False
                xpp.red = True
                x = xpp
                continue
            if x is xp.left:
                x = xp
                root = _rotate_right(root, x)
                xp = x.parent
                xpp = None if xp is None else xp.parent
            if xp is not None:
                xp.red = False
                if xpp is not None:
                    xpp.red = True
                    root = _rotate_left(root, xpp)


class _HashMapKeys:
    def __init__(self, initial_capacity: int | None = None) -> None:
        self.table: list[_Node | None] = []
        # HashMap(int): the first table has tableSizeFor(initialCapacity) slots (at least 1)
        self.threshold = 0 if initial_capacity is None else 1 << max(initial_capacity - 1, 0).bit_length()
        self.size = 0

    def _move_root_to_front(self, root: _Node) -> None:
        index = root.hash & (len(self.table) - 1)
        first = self.table[index]
        if root is first:
            return
        self.table[index] = root
        rp, rn = root.prev, root.next
        if rn is not None:
            rn.prev = rp
        if rp is not None:
            rp.next = rn
        if first is not None:
            first.prev = root
        root.next, root.prev = first, None

    def _treeify(self, head: _Node) -> None:
        root: _Node | None = None
        for x in _chain(head):
            x.left = x.right = None
            if root is None:
                x.parent, x.red, root = None, False, x
                continue
            p = root
            while True:
                d = _direction(x.hash, x.cmp, p)
                child = p.left if d <= 0 else p.right
                if child is None:
                    x.parent = p
                    if d <= 0:
                        p.left = x
                    else:
                        p.right = x
                    root = _balance_insertion(root, x)
                    break
                p = child
        assert root is not None
        self._move_root_to_front(root)

    def _put_tree(self, head: _Node, node: _Node) -> None:
        root = head
        while root.parent is not None:
            root = root.parent
        p = root
        while True:
            d = _direction(node.hash, node.cmp, p)
            child = p.left if d <= 0 else p.right
            if child is None:
                xpn = p.next
                node.next, node.tree = xpn, True
                if d <= 0:
                    p.left = node
                else:
                    p.right = node
                p.next = node
                node.parent = node.prev = p
                if xpn is not None:
                    xpn.prev = node
                self._move_root_to_front(_balance_insertion(root, node))
                return
            p = child

    def _resize(self) -> None:
        old = self.table
        if old:  # HashMap.resize: the threshold doubles from a 16-slot table on, else is 3/4 of the new size
            cap = len(old) << 1
            self.threshold = self.threshold << 1 if len(old) >= 16 else cap * 3 // 4
        elif self.threshold:  # sized by the constructor
            cap = self.threshold
            self.threshold = cap * 3 // 4
        else:
            cap, self.threshold = 16, 12
        self.table = [None] * cap
        for j, head in enumerate(old):
            if head is None:
                continue
            if head.next is None:
                self.table[head.hash & (cap - 1)] = head
                continue
            nodes = _chain(head)
            lo = [n for n in nodes if not n.hash & len(old)]
            hi = [n for n in nodes if n.hash & len(old)]
            if not head.tree:
                self.table[j], self.table[j + len(old)] = _link(lo, False), _link(hi, False)
                continue
            for index, side, other in ((j, lo, hi), (j + len(old), hi, lo)):  # TreeNode.split
                if not side:
                    continue
                if len(side) <= _UNTREEIFY_THRESHOLD:
                    self.table[index] = _link(side, False)
                else:
                    self.table[index] = _link(side, True)
                    if other:  # else the tree is kept as it is
                        self._treeify(side[0])

    def put(self, key: str) -> None:
        h = _hash(key)
        if not self.table:
            self._resize()
        i = h & (len(self.table) - 1)
        head = self.table[i]
        if head is None:
            self.table[i] = _Node(h, key)
        elif any(n.key == key for n in _chain(head)):
            return
        elif head.tree:
            self._put_tree(head, _Node(h, key))
        else:
            nodes = _chain(head)
            node = _Node(h, key)
            nodes[-1].next, node.prev = node, nodes[-1]
            if len(nodes) >= _TREEIFY_THRESHOLD:  # putVal: binCount >= TREEIFY_THRESHOLD - 1
                self._treeify_bin(h)
        self.size += 1
        if self.size > self.threshold:
            self._resize()

    def _treeify_bin(self, h: int) -> None:
        if len(self.table) < _MIN_TREEIFY_CAPACITY:
            self._resize()
            return
        head = self.table[h & (len(self.table) - 1)]
        if head is not None:
            _link(_chain(head), True)
            self._treeify(head)

    def keys(self) -> list[str]:
        return [n.key for head in self.table for n in _chain(head)]


def hash_map_order(keys: Iterable[str], initial_capacity: int | None = None) -> list[str]:
    """The keys, as ``put`` in this order into a ``new HashMap<>()`` (or ``new HashMap<>(initial_capacity)``:
    the admin client's results are sized by their count) iterates them."""
    table = _HashMapKeys(initial_capacity)
    for key in keys:
        table.put(key)
    return table.keys()

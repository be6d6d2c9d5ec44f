"""The Co-STORM mind map (docs/design.md § Mind map; Co-STORM paper §3.4 and appendix B): a
tree of concepts whose nodes hold pieces of cited information.

- **insert**: the node paths most similar to the information's question (cosine of
  all-MiniLM-L6-v2 embeddings between the question's words beyond the topic's, ``aspect_of``,
  and the path without the root's name, which every path shares) are the candidates; the engine
  picks one, or a new child under
  one (``CoStormSteps.choose_placement``), told also each candidate's centroid similarity (mean
  cosine of the information's text to the items already below it).
- **reorganize**: a node with more than K items gets new subtopics from the engine
  (``CoStormSteps.subtopics``) and its items are re-inserted in the subtree rooted at it (by
  the item's own text, with no new nodes), then the map is cleaned.
- **clean**: repeatedly delete non-root nodes with no information below them and collapse a
  node with a single child into that node (its items and children move up).

The map is pydantic data, stored as one JSON string in Redis (``research.costorm.state``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol

from pydantic import BaseModel, Field

from research.engines.costorm_steps import CoStormSteps, PlacementInput, SubtopicInput
from research.text import aspect_of

SEP = " > "
TOP_CANDIDATES = 5
MAX_SUBTOPICS = 4
CENTROID_ITEMS = 12  # items per candidate compared with a new item's text
SAME_CONCEPT = 0.8  # cosine of two concept names that makes them one node (MiniLM)


class Similarity(Protocol):
    """Anything with ``sim(a: list[str], b: list[str]) -> ndarray (len(a), len(b))`` of cosines."""

    def sim(self, a: list[str], b: list[str]): ...


class MindItem(BaseModel):
    """One piece of information: a cited sentence and the source it comes from.

    ``question``: the question it was retrieved for; ``turn``: the turn that brought it.
    """

    id: int
    text: str
    source_id: str
    title: str = ""
    url: str = ""
    question: str = ""
    turn: int = 0


class MindNode(BaseModel):
    """A concept: a name, its own items (ids into ``MindMap.items``) and subtopics.

    ``hold``: item count at which a reorganization left the node over-full; it is not retried
    before ``hold + K // 2`` items (so a map that cannot be split does not loop).
    """

    name: str
    items: list[int] = Field(default_factory=list)
    children: list[MindNode] = Field(default_factory=list)
    hold: int = 0

    def child(self, name: str) -> MindNode | None:
        return next((c for c in self.children if c.name.lower() == name.strip().lower()), None)

    def total_items(self) -> int:
        """Items in this node's subtree (own + descendants')."""
        return len(self.items) + sum(c.total_items() for c in self.children)


class MindMap(BaseModel):
    """The whole map: ``root`` is named after the topic and holds no items itself."""

    topic: str
    root: MindNode
    items: list[MindItem] = Field(default_factory=list, description="id = index")

    @classmethod
    def new(cls, topic: str) -> MindMap:
        return cls(topic=topic, root=MindNode(name=topic))

    # ------------------------------------------------------------------ reading
    def walk(
        self, node: MindNode | None = None, prefix: str = ""
    ) -> Iterator[tuple[str, MindNode]]:
        """``(path, node)`` pre-order from ``node`` (default the root); path is ' > '-joined."""
        node = node or self.root
        path = f"{prefix}{SEP}{node.name}" if prefix else node.name
        yield path, node
        for c in node.children:
            yield from self.walk(c, path)

    def find(self, path: str) -> MindNode | None:
        """The node at ``path``, or None."""
        return next((n for p, n in self.walk() if p == path), None)

    def depth(self) -> int:
        """Levels below the root (0 = only the root)."""

        def d(n: MindNode) -> int:
            return 1 + max((d(c) for c in n.children), default=0) if n.children else 0

        return d(self.root)

    def node_names(self) -> list[str]:
        return [n.name for _, n in self.walk()][1:]

    def item_paths(self) -> dict[int, str]:
        """item id → path of the node holding it."""
        return {i: p for p, n in self.walk() for i in n.items}

    # ------------------------------------------------------------------ insert (appendix B)
    def add_item(
        self, item: MindItem, question: str, steps: CoStormSteps, vectors: Similarity, k: int
    ) -> str:
        """Insert a new piece of information (its ``id`` is assigned here); reorganize the node
        it lands in when it then holds more than ``k`` items. Returns the final node path."""
        item = item.model_copy(update={"id": len(self.items)})
        self.items.append(item)
        path = self._place(
            item.id, question or item.text, steps, vectors, self.root, allow_new=True
        )
        self.clean()  # docs/design.md § Mind map: pseudocode: insert, then clean
        self.rebalance(steps, vectors, k)
        return self.item_paths().get(item.id, path)

    def rebalance(self, steps: CoStormSteps, vectors: Similarity, k: int, rounds: int = 5) -> None:
        """Reorganize over-full nodes (more than ``k`` items; a node whose split failed waits
        for ``k // 2`` more items), at most ``rounds`` reorganizations per call."""
        for _ in range(rounds):
            full = next(
                (
                    p
                    for p, n in self.walk()
                    if len(n.items) > k and len(n.items) >= (n.hold + k // 2 if n.hold else 0)
                ),
                None,
            )
            if full is None:
                return
            self.reorganize(full, steps, vectors, k)

    def _place(
        self,
        item_id: int,
        question: str,
        steps: CoStormSteps,
        vectors: Similarity,
        under: MindNode,
        allow_new: bool,
    ) -> str:
        """Top-candidate selection by embedding similarity, then the engine's choice."""
        prefix = self._prefix_of(under)
        cands = list(self.walk(under, prefix))
        sims = vectors.sim(
            [aspect_of(question, self.topic)], [self._path_text(p) for p, _ in cands]
        )[0]
        item = self.items[item_id]
        isims = self._centroid_sims(item, [n for _, n in cands], vectors)
        order = sorted(range(len(cands)), key=lambda i: (-max(float(sims[i]), isims[i]), i))[
            :TOP_CANDIDATES
        ]
        choice = steps.choose_placement(
            PlacementInput(
                topic=self.topic,
                question=question,
                text=item.text,
                candidates=[cands[i][0] for i in order],
                similarities=[round(float(sims[i]), 4) for i in order],
                allow_new=allow_new,
                item_similarities=[isims[i] for i in order],
            )
        )
        by_path = dict(cands)
        path = choice.path if choice.path in by_path else cands[order[0]][0]
        node = by_path[path]
        new = choice.new_node.strip() if allow_new else ""
        if node is self.root and not new and allow_new:
            new = _fallback_name(question)
        if new:
            same = self._same_concept(new, vectors)
            if same is not None:  # "Postmenopausal Patients" joins "Postmenopausal Women"
                path, node = same
            else:
                child = node.child(new)
                if child is None:
                    child = MindNode(name=new[:80])
                    node.children.append(child)
                node, path = child, f"{path}{SEP}{child.name}"
        node.items.append(item_id)
        return path

    def _centroid_sims(
        self, item: MindItem, nodes: list[MindNode], vectors: Similarity
    ) -> list[float]:
        """Per node: mean cosine of ``item.text`` to the (up to ``CENTROID_ITEMS`` first) other
        items in its subtree, i.e. similarity to the node's centroid; -1 for the root and for
        nodes holding no other item."""
        held = [
            [i for i in self._subtree_items(n) if i != item.id][:CENTROID_ITEMS]
            if n is not self.root
            else []
            for n in nodes
        ]
        ids = sorted({i for h in held for i in h})
        if not ids:
            return [-1.0] * len(nodes)
        row = vectors.sim([item.text], [self.items[i].text for i in ids])[0]
        col = {i: float(row[j]) for j, i in enumerate(ids)}
        return [round(sum(col[i] for i in h) / len(h), 4) if h else -1.0 for h in held]

    def _subtree_items(self, node: MindNode) -> list[int]:
        return [*node.items, *(i for c in node.children for i in self._subtree_items(c))]

    def _path_text(self, path: str) -> str:
        """What a path is compared with: the concept names below the root (the topic for the
        root itself), so the topic words every path shares do not inflate the similarities."""
        below = (
            path[len(self.root.name) + len(SEP) :] if path.startswith(self.root.name + SEP) else ""
        )
        return below or self.topic

    def _prefix_of(self, node: MindNode) -> str:
        for p, n in self.walk():
            if n is node:
                return p.rsplit(SEP, 1)[0] if SEP in p else ""
        raise ValueError("node is not in this mind map")

    # ------------------------------------------------------------------ reorganize + clean
    def reorganize(self, path: str, steps: CoStormSteps, vectors: Similarity, k: int) -> None:
        """Seed 004: new subtopics under the concept at ``path``; its items are re-inserted in
        its subtree (placement by the item's text, no new nodes); then ``clean``."""
        node = self.find(path)
        if node is None or not node.items:
            return
        texts = [self.items[i].text for i in node.items]
        out = steps.subtopics(
            SubtopicInput(topic=self.topic, path=path, items=texts, max_subtopics=MAX_SUBTOPICS)
        )
        names = out.names
        for name in names:
            if (
                name.strip()
                and node.child(name) is None
                and name.strip().lower() != node.name.lower()
                and self._same_concept(name, vectors) is None
            ):
                node.children.append(MindNode(name=name.strip()[:80]))
        if not node.children or len(names) == 0:
            node.hold = len(node.items)
            return
        moving, node.items = node.items, []
        if len(out.assignment) == len(moving):  # the engine clustered the items itself
            for i, a in zip(moving, out.assignment, strict=False):
                target = node.child(names[a]) if 0 <= a < len(names) else None
                (target or node).items.append(i)
        else:
            for i in moving:
                self._place(i, self.items[i].text, steps, vectors, node, allow_new=False)
        self.clean()
        after = self.find(path)
        if after is not None and len(after.items) > k:
            after.hold = len(after.items)

    def _same_concept(self, name: str, vectors: Similarity) -> tuple[str, MindNode] | None:
        """The node anywhere in the map that names the same concept as ``name``: the same
        words up to case and plural, or cosine ≥ ``SAME_CONCEPT`` (all-MiniLM-L6-v2); None
        when there is none. Near-identical concepts are one node, not siblings or cousins."""
        nodes = [(p, n) for p, n in self.walk() if n is not self.root]
        if not nodes:
            return None
        key = _concept_key(name)
        for p, n in nodes:
            if _concept_key(n.name) == key:
                return p, n
        sims = vectors.sim([name], [n.name for _, n in nodes])[0]
        best = max(range(len(nodes)), key=lambda i: float(sims[i]))
        return nodes[best] if float(sims[best]) >= SAME_CONCEPT else None

    def clean(self) -> None:
        """Delete non-root nodes with no information in their subtree; collapse every non-root
        node with exactly one child (the child's items and children move up); at the root a
        single item-less child is replaced by its children. Repeats until nothing changes."""
        changed = True
        while changed:
            changed = self._clean(self.root, is_root=True)

    def _clean(self, node: MindNode, is_root: bool = False) -> bool:
        changed = False
        for c in list(node.children):
            changed |= self._clean(c)
        kept = [c for c in node.children if c.total_items() > 0]
        if len(kept) != len(node.children):
            node.children, changed = kept, True
        if len(node.children) == 1:
            only = node.children[0]
            if not is_root:
                node.items += only.items
                node.children = only.children
                changed = True
            elif not only.items and only.children:
                node.children = only.children
                changed = True
        return changed

    # ------------------------------------------------------------------ checks
    def problems(self) -> list[str]:
        """Structural problems (empty = sound): non-root nodes without information below them,
        non-root nodes with a single child, items held by no node or by two nodes."""
        out = []
        held: list[int] = []
        for p, n in self.walk():
            held += n.items
            if n is not self.root and n.total_items() == 0:
                out.append(f"{p}: no information")
            if n is not self.root and len(n.children) == 1:
                out.append(f"{p}: single child")
        if sorted(held) != list(range(len(self.items))):
            out.append("items are not each held by exactly one node")
        return out


def _concept_key(name: str) -> frozenset[str]:
    """A concept name's words, lower case, plural ``s`` off ("Postmenopausal Women" and
    "postmenopausal woman" differ; "Trials" and "trial" do not)."""
    words = re.findall(r"[a-z0-9]+", name.lower())
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


def _fallback_name(question: str) -> str:
    words = question.strip().rstrip("?.!").split()
    return " ".join(words[:6]) or "Other"

"""Per-item loops over items nothing is known of, whose results are joined into one tensor (TW406 without a fix).

    policy_loss = []
    for log_prob, R in zip(probs, returns):
        policy_loss.append(-log_prob * R)
    policy_loss = torch.cat(policy_loss).sum()

When the walked lists or tensors are known, the general vectorizer proves a rewrite (or says which step it cannot
batch). When they are not (a list filled in another method, a parameter no call site shows), no rewrite can be
proven, but the loop is still plainly the same tensor op on every item, collected and joined by one
``torch.cat``/``torch.stack``: it is flagged, with that reason. Only a loop of this exact shape is: a straight body
of temporaries and one ``append`` per list, tensor ops only (no module, user function or I/O call, no value carried
from one item to the next), each list made empty just before and joined just after.
"""

from __future__ import annotations

import ast
from typing import Optional

from torchwise.analysis import optable
from torchwise.analysis.values import SeqValue, TensorValue
from torchwise.vectorize import proof

_JOINS = frozenset({"torch.cat", "torch.stack", "torch.concat", "torch.concatenate"})
_FACTORIES = frozenset({"tensor", "as_tensor"})  # `torch.tensor([R])` of one item's numbers
_METHODS = frozenset({"item", "cpu", "cuda"})  # tensor methods the op table does not list
_BUILTINS = frozenset({"float", "int", "abs"})


def unknown_items_reason(ctx, scope, loop: ast.For) -> Optional[str]:
    """The reason to flag ``loop`` (a per-item loop over unknown items whose results are joined), or None."""
    targets, walked = _walks(ctx, loop.target, loop.iter)
    if walked is None:
        return None
    lists = _collected(loop.body, targets, scope)
    if not lists or not any(_pointwise(_append_value(stmt), scope) for stmt in loop.body
                            if isinstance(stmt, ast.Expr) and _append_of(stmt.value) is not None):
        return None  # a reduction of each item (`q.norm()`) batches only when the items have one shape
    for name in lists:
        if not _made_empty_before(ctx, loop, name) or not _joined_next(ctx, loop, name, scope):
            return None
    return _reason(ctx, walked)


def unknown_items_reason_of_join(ctx, scope, call: ast.Call) -> Optional[str]:
    """The same for ``torch.stack([op(x) for x in xs])`` / ``torch.cat(...)`` of a comprehension (TW404), or None."""
    if scope.qualname(call.func) not in _JOINS or not call.args \
            or not isinstance(call.args[0], (ast.ListComp, ast.GeneratorExp)):
        return None
    comprehension = call.args[0]
    if len(comprehension.generators) != 1 or comprehension.generators[0].ifs \
            or comprehension.generators[0].is_async:
        return None
    generator = comprehension.generators[0]
    targets, walked = _walks(ctx, generator.target, generator.iter)
    if walked is None:
        return None
    if not _op_of(comprehension.elt, targets) or not _tensor_ops_only(comprehension.elt, scope, set()) \
            or not _pointwise(comprehension.elt, scope):
        return None
    return _reason(ctx, walked)


def _walks(ctx, target: ast.expr, iterable: ast.expr) -> tuple:
    """The names a loop (or comprehension) binds and the parts it walks, each either known alike or wholly
    unknown; (None, None) when not (sub-modules and numbers are known not to be tensors, and tensors of shapes
    that differ cannot be joined)."""
    targets, walked = _target_names(target), _walked(iterable)
    if targets is None or not walked or any(not (_known(ctx.value(w)) or _unknown(ctx.value(w))) for w in walked):
        return None, None
    return targets, walked


def _reason(ctx, walked: list) -> Optional[str]:
    unknown = [w for w in walked if _unknown(ctx.value(w))]
    if not unknown:
        return None  # what stops the rewrite is not what the items are: the general vectorizer says, or nothing
    names = " and ".join(f"`{proof_text(ctx, w)}`" for w in unknown)
    return (f"nothing is known here of what {names} {'hold' if len(unknown) > 1 else 'holds'}: one op over "
            f"`torch.stack`/`torch.cat` of the items is the same only when they are tensors whose shapes line up")


def proof_text(ctx, node: ast.expr) -> str:
    return ctx.source.text_of(ctx.source.span(node))


def _target_names(target: ast.expr) -> Optional[set]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Tuple) and target.elts:
        names = set()
        for element in target.elts:
            inner = _target_names(element)
            if inner is None:
                return None
            names |= inner
        return names
    return None


def _walked(iterable: ast.expr) -> list:
    """The names walked: ``xs``, ``policy.saved``, or the parts of ``zip(...)`` / ``enumerate(...)`` (else [])."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and not iterable.keywords \
            and iterable.func.id in ("zip", "enumerate") and iterable.args:
        if iterable.func.id == "enumerate" and len(iterable.args) != 1:
            return []
        parts = []
        for arg in iterable.args:
            inner = _walked(arg)
            if not inner:
                return []
            parts.extend(inner)
        return parts
    if isinstance(iterable, ast.Name) or isinstance(iterable, ast.Attribute) and _plain_attribute(iterable):
        return [iterable]
    return []


def _plain_attribute(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _unknown(value) -> bool:
    """Nothing is known of what it holds: not what it is, or a list of items not known."""
    return value is None or isinstance(value, SeqValue) and value.kind in ("list", "tuple") and value.each is None


def _known(value) -> bool:
    """A tensor of known shape, or a list of such tensors (or of tuples of them)."""
    if isinstance(value, TensorValue):
        return value.shape is not None and value.dtype is not None
    if isinstance(value, SeqValue) and value.kind in ("list", "tuple"):
        each = value.each
        if isinstance(each, SeqValue) and each.items is not None:
            return all(_known(item) for item in each.items)
        return isinstance(each, TensorValue) and _known(each)
    return False


def _collected(body: list, targets: set, scope) -> Optional[set]:
    """The lists a straight per-item body appends to (each once, an op of the item), or None: not such a body."""
    lists, assigned = set(), set(targets)
    bound_in_body = {name for stmt in body if isinstance(stmt, ast.Assign) for target in stmt.targets
                     for name in (_target_names(target) or ())}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            value, bound = stmt.value, _target_names(stmt.targets[0])
            if bound is None or bound & lists:
                return None
        elif isinstance(stmt, ast.Expr) and _append_of(stmt.value) is not None:
            name = _append_of(stmt.value)
            if name in lists or name in assigned:
                return None
            value, bound = stmt.value.args[0], set()
            if not _op_of(value, targets | assigned):
                return None
            lists.add(name)
        else:
            return None
        if not _tensor_ops_only(value, scope, lists):
            return None
        # a name bound in the body and read before it is bound there carries a value from one item to the next
        read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        if read & lists or read & (bound_in_body - assigned):
            return None
        assigned |= bound
    return lists


def _append_of(call: ast.expr) -> Optional[str]:
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords \
            and not isinstance(call.args[0], ast.Starred):
        return call.func.value.id
    return None


def _append_value(stmt: ast.Expr) -> ast.expr:
    return stmt.value.args[0]


_CONVERSIONS = frozenset({"item", "float", "double", "half", "bfloat16", "long", "int", "bool", "to", "detach", "clone",
                          "cpu", "cuda", "contiguous", "type_as"})


def _pointwise(value: ast.expr, scope) -> bool:
    """Only element-wise ops, products and conversions: the results of equal-shaped items have one shape, so
    joining them (``torch.stack`` needs one shape) says the items line up. A reduction (``q.norm()``) would not."""
    for node in ast.walk(value):
        if not isinstance(node, ast.Call):
            continue
        qualname = scope.qualname(node.func)
        module, _, name = (qualname or "").rpartition(".")
        if module == "torch" and (name in _FACTORIES or name in optable.names_of(optable.Family.POINTWISE,
                                                                                  "function")):
            continue
        if module == "torch.nn.functional" and name in optable.names_of(optable.Family.POINTWISE, "functional"):
            continue
        if qualname is None and isinstance(node.func, ast.Attribute) \
                and (node.func.attr in _CONVERSIONS or node.func.attr in optable.names_of(optable.Family.POINTWISE)):
            continue
        if qualname is None and isinstance(node.func, ast.Name) and node.func.id in _BUILTINS:
            continue
        return False
    return True


def _op_of(value: ast.expr, names: set) -> bool:
    """An operation on an item (not the item itself)."""
    return any(isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call))
               and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))
               for node in ast.walk(value))


def _tensor_ops_only(value: ast.expr, scope, lists: set) -> bool:
    for node in ast.walk(value):
        if isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.ListComp,
                             ast.GeneratorExp, ast.SetComp, ast.DictComp, ast.Starred)):
            return False
        if isinstance(node, ast.Call) and not _tensor_op(node, scope):
            return False
    return True


def _tensor_op(call: ast.Call, scope) -> bool:
    qualname = scope.qualname(call.func)
    if qualname is not None:
        module, _, name = qualname.rpartition(".")
        if module == "torch.nn.functional":
            return name not in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                "feature_alpha_dropout", "gumbel_softmax", "rrelu")
        return module == "torch" and (name in _FACTORIES or optable.function(name) is not None)
    if isinstance(call.func, ast.Name):
        return scope.owner_of(call.func.id) is None and call.func.id in _BUILTINS
    if isinstance(call.func, ast.Attribute):
        return call.func.attr in _METHODS or optable.method(call.func.attr) is not None
    return False


def _made_empty_before(ctx, loop: ast.For, name: str) -> bool:
    """``name = []`` (or ``R, name = 0, []``) before the loop in its block, and nothing in between mentions it."""
    place = proof.place_of(ctx, loop)
    if place is None:
        return False
    for stmt in reversed(place.block[:place.index]):
        if not proof.mentions(stmt, name):
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            return False
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            pairs = [(t, v) for t, v in zip(target.elts, value.elts) if proof.mentions(t, name)]
            if len(pairs) != 1 or any(proof.mentions(v, name) for v in value.elts):
                return False
            target, value = pairs[0]
        return isinstance(target, ast.Name) and target.id == name and isinstance(value, ast.List) \
            and not value.elts
    return False


def _joined_next(ctx, loop: ast.For, name: str, scope) -> bool:
    """The first statement after the loop that mentions ``name`` joins it: ``torch.cat(name)``/``torch.stack``."""
    place = proof.place_of(ctx, loop)
    if place is None:
        return False
    for stmt in place.block[place.index + 1:]:
        if not proof.mentions(stmt, name):
            continue
        return any(isinstance(node, ast.Call) and scope.qualname(node.func) in _JOINS and node.args
                   and isinstance(node.args[0], ast.Name) and node.args[0].id == name
                   for node in ast.walk(stmt))
    return False

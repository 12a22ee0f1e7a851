"""The tool decorator, schemas, methods, the recorder and handing over to the agent."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillforge
from skillforge import Forge, ToolDefinitionError
from skillforge._schema import function_schema
from skillforge.demo import desk
from tests.toolsets.inventory import Inventory


def test_decorated_tools_stay_plain_functions_outside_solve(desk_db: Path) -> None:
    assert desk.get_order.__name__ == "get_order"
    assert "Look up an order" in desk.get_order.__doc__
    assert desk.get_order("1001")["id"] == "1001"
    assert desk.get_order(order_id="1001")["id"] == "1001"


def test_bare_and_parametrised_decorators_register_read_and_write(tmp_path: Path) -> None:
    forge = Forge(skills_dir=tmp_path / "s", state_dir=tmp_path / "t")

    @forge.tool
    def write_it(x: int) -> int:
        return x

    @forge.tool(read=True)
    def read_it(x: int) -> int:
        return x

    assert forge.registry["write_it"].read is False
    assert forge.registry["read_it"].read is True
    assert write_it(3) == 3 and read_it(4) == 4


def test_schema_comes_from_signature_and_docstring() -> None:
    s = function_schema(desk.refund_payment.__skillforge_tool__.func)
    assert s.description.startswith("Refund an amount")
    props = s.parameters["properties"]
    assert props["amount"] == {"description": "how much to refund.", "type": "number"}
    assert props["payment_id"]["type"] == "string"
    assert s.parameters["required"] == ["order_id", "payment_id", "amount"]
    assert s.param_names == ("order_id", "payment_id", "amount")


def test_defaults_and_optional_parameters_are_not_required() -> None:
    def f(a: str, b: int = 3, c: list[str] | None = None) -> None:
        """F."""

    s = function_schema(f)
    assert s.parameters["required"] == ["a"]
    assert s.parameters["properties"]["b"]["default"] == 3


def test_fingerprint_changes_when_the_signature_changes() -> None:
    def f(a: str) -> None: ...
    fp1 = function_schema(f).fingerprint

    def f(a: str, b: int) -> None: ...  # noqa: F811
    fp2 = function_schema(f).fingerprint

    def f(a: int) -> None: ...  # noqa: F811
    fp3 = function_schema(f).fingerprint
    assert len({fp1, fp2, fp3}) == 3


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f(*args): ...", "name each parameter"),
        ("def f(**kw): ...", "name each parameter"),
        ("def f(a, /): ...", "positional-only"),
    ],
)
def test_signatures_a_model_cannot_call_are_refused(source: str, message: str) -> None:
    ns: dict = {}
    exec(source, ns)
    with pytest.raises(ToolDefinitionError, match=message):
        function_schema(ns["f"])


def test_unschemable_parameter_types_are_refused_with_the_fix() -> None:
    class Opaque:
        pass

    def f(x: Opaque) -> None: ...

    with pytest.raises(ToolDefinitionError, match="JSON types"):
        function_schema(f)


def test_two_tools_with_one_name_are_refused(tmp_path: Path) -> None:
    forge = Forge(skills_dir=tmp_path / "s", state_dir=tmp_path / "t")

    def a() -> None: ...

    def b() -> None: ...

    forge.tool(name="same")(a)
    with pytest.raises(ToolDefinitionError, match="already registered"):
        forge.tool(name="same")(b)


def test_decorating_a_non_callable_is_refused(tmp_path: Path) -> None:
    forge = Forge(skills_dir=tmp_path / "s", state_dir=tmp_path / "t")
    with pytest.raises(ToolDefinitionError, match="needs a function"):
        forge.tool(42)


def test_methods_record_without_the_instance_and_replay_with_it(tmp_path: Path) -> None:
    schema = Inventory.check_stock.__skillforge_tool__.schema
    assert schema.is_method and schema.param_names == ("sku",)
    assert "self" not in schema.parameters["properties"]

    inv = Inventory()

    def agent(task: str) -> str:
        sku, qty = task.split()[1], int(task.split()[2])
        stock = inv.check_stock(sku)
        inv.reserve(sku=stock["sku"], qty=qty)
        return f"reserved {qty} of {sku}"

    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=agent,
                  tools=[Inventory.check_stock, Inventory.reserve])
    first = forge.solve("reserve SKU-1 2")
    assert first.learned == "reserve_skill", first.not_learned  # never shadows the tool it calls
    assert first.calls[0].args == {"sku": "SKU-1"}  # the instance is not recorded as data
    source = (forge.skills_dir / "reserve_skill.py").read_text()
    assert "*, inventory" in source and "inventory.check_stock(sku=sku)" in source

    inv2 = Inventory()
    forge.provide(inv2)
    inv2.stock["SKU-3"] = 4  # as much in stock as when learned (a small count is guarded by value)
    hit = forge.solve("reserve SKU-3 3")
    assert hit.source == "skill" and hit.output == "reserved 3 of SKU-3", hit.handover
    assert inv2.reserved == [("SKU-3", 3)] and inv.reserved == [("SKU-1", 2)]


def test_positional_calls_are_recorded_by_parameter_name(desk_db: Path, make_forge) -> None:
    forge = make_forge(agent=lambda task: desk.get_order("1001")["status"])
    result = forge.solve("Status of 1001 please")
    assert result.calls[0].args == {"order_id": "1001"}


def test_outside_solve_nothing_is_recorded(desk_db: Path) -> None:
    from skillforge._tools import current_run

    assert current_run() is None
    desk.get_order("1001")
    assert current_run() is None


def test_module_level_tool_and_solve_use_the_default_forge(tmp_path: Path, monkeypatch, desk_db: Path) -> None:
    monkeypatch.setenv("SKILLFORGE_SKILLS_DIR", str(tmp_path / "default-skills"))
    monkeypatch.setenv("SKILLFORGE_STATE_DIR", str(tmp_path / "default-state"))
    forge = skillforge.default_forge()
    assert forge.skills_dir == tmp_path / "default-skills"

    @skillforge.tool(read=True)
    def lookup_thing(thing_id: str) -> dict:
        return {"id": thing_id}

    forge.agent = lambda task: lookup_thing(thing_id=task.split()[-1])["id"]
    assert skillforge.solve("find thing T-100").source == "agent"
    assert forge.registry["lookup_thing"].read is True


def test_handover_when_a_guard_fails_continues_without_repeating_writes(desk_db: Path, make_forge) -> None:
    forge = make_forge()
    assert forge.solve("Refund order #1001").learned == "refund_order"
    path = forge.skills_dir / "refund_order.py"
    text = path.read_text()
    text = text.replace(
        "    order = get_order(order_id=order_id)\n",
        "    order = get_order(order_id=order_id)\n    require(order['status'] != 'refunded', 'the order is not refunded yet')\n",
    ).replace("from skillforge.demo.desk", "from skillforge.runtime import require\nfrom skillforge.demo.desk")
    path.write_text(text)
    forge.reload()
    result = forge.solve("Refund order #1001")  # already refunded by the first run
    assert result.source == "skill+agent" and result.skill == "refund_order"
    assert "the order is not refunded yet" in result.handover
    assert [c.tool for c in result.calls] == ["get_order"]  # the agent saw it and did not refund again
    assert result.output == "Order 1001 was already refunded."
    refunds = desk._conn().execute("SELECT COUNT(*) FROM refunds WHERE order_id = '1001'").fetchone()[0]
    assert refunds == 1


def test_handover_without_transcript_support_never_repeats_a_write(desk_db: Path, make_forge) -> None:
    forge = make_forge()
    forge.solve("Change the email of customer C-104 to a1@example.org")
    path = forge.skills_dir / "change_email_customer.py"
    text = path.read_text().replace("    return f", "    require(False, 'stop after the write')\n    return f")
    text = text.replace("from skillforge.demo.desk", "from skillforge.runtime import require\nfrom skillforge.demo.desk")
    path.write_text(text)
    forge.reload()
    calls: list[str] = []
    forge.agent = lambda task: calls.append(task)  # cannot take transcript=
    result = forge.solve("Change the email of customer C-105 to b2@example.org")
    assert not result.ok and "writes are never repeated" in result.error
    assert calls == []


def test_a_tools_own_check_is_captured_when_learned_and_compared_before_replay(tmp_path: Path) -> None:
    from skillforge import Check
    from tests.toolsets import versioned

    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state")
    read_doc = forge.tool(read=True, guard=Check(capture=versioned.capture_version, compare=versioned.same_version))(
        versioned.read_doc
    )
    write_doc = forge.tool(versioned.write_doc)

    def agent(task: str, transcript=None) -> str:
        doc_id = task.split()[-1]
        if transcript is None:
            read_doc(doc_id=doc_id)
        write_doc(doc_id=doc_id, text="stamped")
        return f"stamped {doc_id}"

    forge.agent = agent
    versioned.reset()
    first = forge.solve("Stamp document D1")
    assert first.learned == "stamp_document", first.not_learned
    source = (forge.skills_dir / "stamp_document.py").read_text()
    assert "require(check(read_doc, 1, doc_id=doc_id), 'its pre-check matches the learned run')" in source

    hit = forge.solve("Stamp document D2")  # same schema version: replayed
    assert hit.source == "skill" and hit.output == "stamped D2"

    versioned.VERSION[0] = 2  # the world changed where the tool's own check looks
    changed = forge.solve("Stamp document D3")
    assert changed.source == "skill+agent" and "pre-check" in changed.handover
    assert changed.handover_at == 0  # the check stopped it before its first call; the agent did the work
    assert [c.tool for c in changed.calls] == ["read_doc", "write_doc"]
    # the newest capture replaces the old one (no variant per change of the checked world)
    assert changed.learned == "stamp_document"
    refreshed = (forge.skills_dir / "stamp_document.py").read_text()
    assert "check(read_doc, 2, doc_id=doc_id)" in refreshed and "check(read_doc, 1," not in refreshed
    assert sorted(p.name for p in forge.skills_dir.glob("[!_]*.py")) == ["stamp_document.py"]
    again = forge.solve("Stamp document D4")
    assert again.source == "skill" and again.skill == "stamp_document"

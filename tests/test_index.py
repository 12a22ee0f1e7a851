"""Finding skills: the hot template index and the derived Chroma index (embedded, real)."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skillforge import Forge
from skillforge._index import HashingEmbedding, HotIndex
from skillforge._library import Library
from skillforge.demo import desk

REPO = Path(__file__).resolve().parent.parent


def _forge_over_committed_skills(tmp_path: Path, skills: Path | None = None) -> Forge:
    target = tmp_path / "skills"
    if not target.exists():
        shutil.copytree(skills or REPO / "skills", target)
    return Forge(skills_dir=target, state_dir=tmp_path / "state", tools=desk.TOOLS)


def test_hot_index_finds_typed_templates_without_chroma(tmp_path: Path) -> None:
    forge = _forge_over_committed_skills(tmp_path)
    match = forge.find("Refund order #1234")
    assert match is not None and match.skill.name == "refund_order" and match.params == {"order_id": "1234", "phrasing": 0}
    assert not (tmp_path / "state" / "chroma").exists()  # the hot path never opened Chroma


def test_free_text_templates_are_found_by_their_literal_words_without_chroma(tmp_path: Path) -> None:
    forge = _forge_over_committed_skills(tmp_path)
    match = forge.find("Please ship order #1044 to 5 Harbor Road, Riverton instead.")
    assert match is not None and match.skill.template.text == "Please ship order #{order_id} to {address} instead."
    family = sorted(s.name for s in forge.skills() if s.template.text == match.skill.template.text)
    assert family == ["ship_order_instead"]  # the demo learned this request's two ways into one file (a branch)
    assert [m.skill.name for m in forge.find_all("Please ship order #1 to 5 Harbor Road, Riverton instead.")] == family
    assert match.params == {"order_id": "1044", "address": "5 Harbor Road, Riverton"}
    assert not (tmp_path / "state" / "chroma").exists()  # a hit never needs the semantic index
    assert forge.find("Please ship order #1044 to 5 Harbor Road, Riverton tomorrow.") is None
    assert (tmp_path / "state" / "chroma").is_dir()  # a miss asks it for candidates (binding decides)


def test_the_word_index_finds_every_free_template_that_binds_among_many_alike(tmp_path: Path) -> None:
    from skillforge._index import HotIndex
    from skillforge._template import Slot, TaskTemplate

    class Skill:
        def __init__(self, name: str, text: str) -> None:
            self.name, self.template = name, TaskTemplate(text, [Slot("x", "text", "str")])

    hot = HotIndex()
    for i in range(300):  # templates alike in words, as a templated stream makes them
        hot.add(Skill(f"s{i}", f"Please move order {{x}} to shelf number{i} today."))
    hot.add(Skill("wanted", "Please move order {x} to the back shelf today."))
    found = hot.find_free("please move order A-1 to the BACK shelf today")
    assert [m.skill.name for m in found] == ["wanted"] and found[0].params == {"x": "A-1"}
    assert hot.find_free("Please move order A-1 to the front shelf today.") == []
    hot.remove("wanted")
    assert hot.find_free("Please move order A-1 to the back shelf today.") == []


def test_retrieval_is_a_suggestion_binding_decides(tmp_path: Path) -> None:
    forge = _forge_over_committed_skills(tmp_path)
    # close in words to a skill, but its literal words differ: Chroma proposes, the template refuses
    assert forge.find("Please ship order #1044 to 5 Harbor Road, Riverton tomorrow.") is None
    assert forge.find("Refund order number 1044") is None


def test_the_index_is_derived_deleting_state_loses_nothing(tmp_path: Path) -> None:
    forge = _forge_over_committed_skills(tmp_path)
    assert forge.reindex() == len(forge.skills()) > 5
    assert forge.reindex() == 0  # nothing stale
    shutil.rmtree(tmp_path / "state")
    again = _forge_over_committed_skills(tmp_path)
    assert again.find("Please ship order #1 to 1 Elm Street, Lakeside instead.") is not None
    assert again.reindex() == len(again.skills())  # rebuilt from the files
    assert again.reindex() == 0


def test_a_store_made_again_at_its_path_is_not_read_through_chromadbs_old_client(tmp_path: Path) -> None:
    """chromadb keeps one client per path for the process; a file at the path is not proof it is the
    store that client opened (here an empty database stands where the deleted store was, as a late
    write of the old client leaves one). Reused, the old client reads and writes the deleted file:
    the rebuilt index never reaches the disk ("no such table: collections")."""
    forge = _forge_over_committed_skills(tmp_path)
    forge.reindex()
    shutil.rmtree(tmp_path / "state")
    store = tmp_path / "state" / "chroma" / "chroma.sqlite3"
    store.parent.mkdir(parents=True)
    sqlite3.connect(str(store)).close()
    again = _forge_over_committed_skills(tmp_path)
    assert again.reindex() == len(again.skills())  # rebuilt, into the file that is there now
    db = sqlite3.connect(str(store))
    try:
        assert db.execute("SELECT COUNT(*) FROM collections").fetchone() == (1,)
    finally:
        db.close()
    assert forge.reindex() == 0  # the first forge reopens the store and finds it complete
    assert set(forge.semantic.collection.get()["ids"]) == {s.name for s in forge.skills()}


def test_reindex_repairs_stale_and_removed_entries(tmp_path: Path) -> None:
    forge = _forge_over_committed_skills(tmp_path)
    forge.reindex()
    (tmp_path / "skills" / "where_order.py").unlink()
    path = tmp_path / "skills" / "refund_order.py"
    path.write_text(path.read_text().replace("Replay of the learned run", "Reviewed refund"))
    fresh = _forge_over_committed_skills(tmp_path)
    assert fresh.reindex() == 2  # one changed (edited), one gone
    ids = set(fresh.semantic.collection.get()["ids"])
    assert "where_order" not in ids and "refund_order" in ids


def test_collection_reopens_in_a_new_process_with_the_offline_embedding(tmp_path: Path) -> None:
    forge = _forge_over_committed_skills(tmp_path)
    forge.reindex()
    script = (
        "import chromadb\n"
        "from skillforge._index import _embedding_function, COLLECTION\n"
        "_embedding_function()\n"
        f"c = chromadb.PersistentClient(path={str(tmp_path / 'state' / 'chroma')!r})\n"
        "coll = c.get_collection(COLLECTION)\n"
        "print(coll.query(query_texts=['Please ship order 5 to 1 Elm Street, Lakeside instead.'], n_results=1)['ids'][0][0])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith("ship_order_instead")


def test_hashing_embedding_is_stable_and_normalised() -> None:
    emb = HashingEmbedding(dim=64)
    a, b = emb(["Refund order #1042", "Refund order #1042"])
    assert np.allclose(a, b) and abs(np.linalg.norm(a) - 1.0) < 1e-6
    c = emb(["completely different words"])[0]
    assert float(np.dot(a, c)) < float(np.dot(a, b))
    assert HashingEmbedding.build_from_config(emb.get_config()).dim == 64


def test_a_skill_is_found_by_each_of_its_phrasings_until_it_is_removed(tmp_path: Path) -> None:
    lib = Library(REPO / "skills")
    skills, _ = lib.scan()
    hot = HotIndex()
    for s in skills:
        hot.add(s)
    for task, said in (("Refund order #1009", 0), ("Can you refund my order 1009? It arrived broken.", 1)):
        (match,) = hot.find(task)
        assert (match.skill.name, match.params) == ("refund_order", {"order_id": "1009", "phrasing": said})
    count = len(hot)
    hot.remove("refund_order")
    assert hot.find("Can you refund my order 1009? It arrived broken.") == [] and hot.find("Refund order #1009") == []
    assert len(hot) == count - 1


def test_skills_whose_tools_are_missing_or_changed_are_not_run(tmp_path: Path, caplog) -> None:
    import logging

    target = tmp_path / "skills"
    shutil.copytree(REPO / "skills", target)
    partial = Forge(skills_dir=target, state_dir=tmp_path / "state", tools=[desk.get_order])
    # only the skills that need no tool but get_order (the status answer, the refusals)
    everything, _ = Library(target).scan()
    expected = {s.name for s in everything if set(s.tools) == {"get_order"}}
    assert "where_order" in expected and {s.name for s in partial.skills()} == expected
    path = target / "where_order.py"
    path.write_text(path.read_text().replace("'fingerprint': '", "'fingerprint': 'x"))
    with caplog.at_level(logging.INFO, logger="skillforge"):
        changed = Forge(skills_dir=target, state_dir=tmp_path / "state", tools=desk.TOOLS)
        assert "where_order" not in {s.name for s in changed.skills()}
    assert "changed incompatibly" in caplog.text and "re-learn" in caplog.text
    assert any(p.path.endswith("where_order.py") for p in changed.problems)


def test_a_tool_whose_parameters_changed_says_what_changed(tmp_path: Path, caplog) -> None:
    import logging

    from skillforge._tools import ToolRegistry

    target = tmp_path / "skills"
    shutil.copytree(REPO / "skills", target)
    forge = Forge(skills_dir=target, state_dir=tmp_path / "state", tools=desk.TOOLS)
    # the same tool, as it would be after someone renamed its parameter
    registry = ToolRegistry()

    def get_order(order_number: str) -> dict:
        return {}

    get_order.__module__ = "skillforge.demo.desk"
    get_order.__qualname__ = "get_order"
    registry.register(get_order, read=True)
    forge.registry.tools["get_order"] = registry.tools["get_order"]
    with caplog.at_level(logging.WARNING, logger="skillforge"):
        forge.reload()
    assert "where_order" not in {s.name for s in forge.skills()}
    assert "its parameters were (order_id) and are (order_number) now" in caplog.text


# -- the same retrieval against a real `chroma run` server on loopback -----------------------------


def test_server_index_finds_free_text_templates_and_is_rebuilt_from_files(tmp_path: Path, chroma_server: str) -> None:
    target = tmp_path / "skills"
    shutil.copytree(REPO / "skills", target)
    forge = Forge(skills_dir=target, state_dir=tmp_path / "state", tools=desk.TOOLS, chroma_url=chroma_server)
    match = forge.find("Please ship order #1044 to 5 Harbor Road, Riverton instead.")
    assert match is not None and match.params["address"] == "5 Harbor Road, Riverton"
    forge.reindex()
    assert not (tmp_path / "state" / "chroma").exists()  # the server holds the index, not the state dir
    assert forge.reindex() == 0  # in step with the files
    (target / "where_order.py").unlink()
    again = Forge(skills_dir=target, state_dir=tmp_path / "state", tools=desk.TOOLS, chroma_url=chroma_server)
    assert again.reindex() == 1  # the deleted skill's entry is repaired away
    assert "where_order" not in set(again.semantic.collection.get()["ids"])


def test_a_bad_chroma_url_is_a_config_error_and_an_unreachable_one_costs_hits_not_correctness(tmp_path: Path) -> None:
    from skillforge import ConfigError

    with pytest.raises(ConfigError, match="SKILLFORGE_CHROMA_URL"):
        _ = Forge(skills_dir=tmp_path / "s", state_dir=tmp_path / "t", chroma_url="not a url").semantic.collection
    target = tmp_path / "skills"
    shutil.copytree(REPO / "skills", target)
    down = Forge(skills_dir=target, state_dir=tmp_path / "state", tools=desk.TOOLS, chroma_url="http://127.0.0.1:9")
    assert down.find("Refund order #1042") is not None  # the hot path needs no index
    assert down.find("Please ship order #1 to 1 Elm Street, Lakeside instead.") is not None  # nor free text
    assert down.find("Please ship order #1 to 1 Elm Street, Lakeside tomorrow.") is None  # a miss, never an error


def test_the_offline_semantic_embedding_ranks_by_meaning(tmp_path: Path) -> None:
    from skillforge._index import MiniLMEmbedding, SemanticIndex

    emb = MiniLMEmbedding()
    money_back, refund, address = emb(["I want my money back for this order", "Refund order #12", "Change my shipping address"])
    assert float(np.dot(money_back, refund)) > float(np.dot(money_back, address)) + 0.2
    forge = _forge_over_committed_skills(tmp_path)
    index = SemanticIndex(tmp_path / "minilm", embedding="minilm")
    index.sync(forge.skills())
    assert index.query("send the parcel to a different street address", n=3)[0].startswith("ship_order_instead")


def test_an_unknown_embedding_is_a_config_error(tmp_path: Path) -> None:
    from skillforge import ConfigError

    with pytest.raises(ConfigError, match="unknown embedding 'bert'"):
        Forge(skills_dir=tmp_path / "s", state_dir=tmp_path / "t", embedding="bert")

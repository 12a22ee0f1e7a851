"""The public surface is exactly what __all__ says, sorted, and every name resolves."""

from __future__ import annotations

import skillforge

EXPECTED = {
    "Agent", "AgentError", "BudgetExceeded", "Call", "Check", "Compiled", "ConfigError", "Explanation", "Forge", "GuardFailed", "IndexError_",
    "InvalidTaskError", "NoAgentError", "NotSerializableError", "OpenAIAgent", "Outcome", "PolicyError", "Rejected",
    "Result", "RunLogError", "SandboxError", "Settings", "SkillFileError", "SkillforgeError", "SkillforgeSignal",
    "ToolDefinitionError", "ToolRef", "Trajectory", "UserError", "__version__", "asolve", "canonical_json",
    "compile_run", "default_forge", "load_settings", "report_usage", "require", "solve", "tool",
}


def test_all_is_sorted_and_complete() -> None:
    assert skillforge.__all__ == sorted(skillforge.__all__)
    assert set(skillforge.__all__) == EXPECTED
    for name in skillforge.__all__:
        assert getattr(skillforge, name) is not None


def test_every_error_derives_from_one_tree_and_signals_escape_except_exception() -> None:
    errors = [getattr(skillforge, n) for n in skillforge.__all__ if n.endswith("Error") or n.endswith("Error_")]
    assert all(issubclass(e, skillforge.SkillforgeError) for e in errors)
    for signal in (skillforge.GuardFailed, skillforge.BudgetExceeded):
        assert issubclass(signal, skillforge.SkillforgeSignal) and not issubclass(signal, Exception)

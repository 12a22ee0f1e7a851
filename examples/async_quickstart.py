"""Async quickstart: ``async def`` tools, an async agent that reports its model usage, ``await forge.asolve()``.

Run from the repository root:  .venv/bin/python -m examples.async_quickstart
"""

from __future__ import annotations

import asyncio
import tempfile

import skillforge
from examples import async_shop


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        forge = skillforge.Forge(skills_dir=f"{tmp}/skills", state_dir=f"{tmp}/.skillforge")
        get_order = forge.tool(read=True)(async_shop.get_order)  # the recording wrappers: still async
        refund = forge.tool(async_shop.refund)

        async def my_agent(task: str) -> str:
            """Stands in for an LLM agent: it awaits the tools, and reports each model request it makes."""
            skillforge.report_usage(prompt_tokens=250, completion_tokens=30)
            order = await get_order(order_id=task.rsplit("#", 1)[-1])
            skillforge.report_usage(prompt_tokens=310, completion_tokens=12)
            await refund(payment_id=order["payment_id"], amount=order["total"])
            return f"Refunded {order['total']} for order {order['id']}"

        forge.agent = my_agent
        first = await forge.asolve("Refund order #1234")
        print(first.source, first.learned, first.llm_calls, first.prompt_tokens)  # agent refund_order 2 560
        second = await forge.asolve("Refund order #5678")
        print(second.source, second.skill, second.llm_calls, second.output)  # skill refund_order 0 Refunded 12.5 ...
        both = await asyncio.gather(forge.asolve("Refund order #1234"), forge.asolve("Refund order #5678"))
        print([r.source for r in both])  # ['skill', 'skill']
        stats = forge.stats().overall
        print(stats.llm_calls, stats.tokens, stats.requests_saved)  # 2 602 6.0
        print(async_shop.REFUNDS)


if __name__ == "__main__":
    asyncio.run(main())

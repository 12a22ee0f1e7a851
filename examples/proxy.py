"""``skillforge proxy`` in front of a model, offline: the agent changes one line (its client's base_url).

The model is the demo's rule-based stand-in on loopback; the proxy is served in this process
(``skillforge proxy --upstream URL`` serves it on its own). The first ticket goes to the model,
and the proxy learns a skill from the conversation; the second, with other values, is answered
by the skill: no request reaches the model.

Run: ``.venv/bin/python -m examples.proxy``
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import openai

from skillforge import Forge, OpenAIAgent
from skillforge.demo import desk
from skillforge.demo.model import StandInModel
from skillforge.proxy import Proxy, ProxyServer
from skillforge.testing import ChatServer

with tempfile.TemporaryDirectory() as tmp, ChatServer(StandInModel()) as model:
    root = Path(tmp)
    desk.open_desk(root / "desk.sqlite3")
    proxy = Proxy(model.base_url, skills_dir=root / "proxy-skills", state_dir=root / "proxy-state")
    with ProxyServer(proxy) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-demo")  # the one line: base_url
        # any agent over that client; here the built-in one, in a Forge that only records
        forge = Forge(skills_dir=root / "skills", state_dir=root / "state", tools=desk.TOOLS, learn=False,
                      agent=OpenAIAgent(model="stand-in", client=client))
        for ticket in ["Refund order #1002", "Refund order #1015"]:
            before = len(model.requests)
            result = forge.solve(ticket)
            proxy.wait_idle()  # learning happens after the reply; wait for it before the next ticket
            print(f"{ticket}: {result.output} ({len(model.requests) - before} requests reached the model)")
        print(*sorted(p.name for p in (root / "proxy-skills").rglob("*.py")))
        client.close()

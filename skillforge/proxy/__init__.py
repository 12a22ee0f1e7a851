"""``skillforge proxy``: an OpenAI-compatible chat-completions proxy that learns skills from conversations.

Point an agent's OpenAI client at the proxy (one ``base_url``) and it forwards every
request to the real API, learning a skill from each finished conversation; a later
conversation a skill fits is answered by the skill, one tool call at a time, without the
upstream. Needs the ``proxy`` extra: ``pip install 'skillforge[proxy]'``.

Modules: ``conversations`` (a request read as a run, pure), ``toolset`` (stand-in tools from
the request's schemas), ``namespaces`` (whose skills serve whom), ``replay`` (serve or
forward; learn), ``probing`` (the upstream as the agent probes ask), ``responses`` (the replies' format, pure), ``app`` (the Starlette app),
``server`` (uvicorn).
"""

from __future__ import annotations

from .app import SKILL_HEADER, Proxy
from .namespaces import NAMESPACE_HEADER
from .server import ProxyServer, serve

__all__ = ["NAMESPACE_HEADER", "SKILL_HEADER", "Proxy", "ProxyServer", "serve"]

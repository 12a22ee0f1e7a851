"""Skills learned by skillforge from the support-desk demo (``make skills`` regenerates them).

Each module is one reviewed, plain Python function: ``from skills.refund_order import refund_order``.
"""

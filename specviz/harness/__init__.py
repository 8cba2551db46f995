"""Harnesses that drive the running app from outside, as its users do: real browsers against a real server
(the classroom load test, `make classroom`). They import nothing of specviz; the tests and scripts/ use them."""

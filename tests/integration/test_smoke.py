from tests.conftest import private


def test_remember_then_context(call):
    r = call("remember", {"context": private(), "arguments": {"text": "likes tea"}})
    assert r.status == 201, r.body
    c = call("context", {"context": private()})
    assert c.status == 200, c.body
    print(c.body)

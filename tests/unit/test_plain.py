

def test_long_node_names_are_cut_so_they_still_differ() -> None:
    """#13: rows cut names to 8 characters (127.0.0. for 127.0.0.1)."""
    from replmon.output.plain import short_names

    assert short_names(["db163.example.com", "db162.example.com"], 16) == ["db163", "db162"]
    assert short_names(["127.0.0.1", "127.0.0.1"], 16) == ["127.0.0.1", "127.0.0.1"]
    assert short_names(["10.0.0.163", "10.0.0.162"], 8) == ["~0.0.163", "~0.0.162"]
    assert short_names(["db-prod-eu-west-163", "db-prod-eu-west-162"], 16) == [
        "~rod-eu-west-163", "~rod-eu-west-162"]
    assert short_names(["lab-primary-long-x", "lab-replica-long-y"], 16) == [
        "lab-primary-lon~", "lab-replica-lon~"]

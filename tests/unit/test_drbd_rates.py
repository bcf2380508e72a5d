"""derive_drbd_rates: KiB/s from two DrbdSamples and their real monotonic timestamps.
Counters that go down (reconnect, re-attach, 32-bit wrap) give None, never negative;
out-of-sync is a gauge, so its change may be negative."""

from __future__ import annotations

from pathlib import Path

import pytest

from replmon.model.drbd import (
    DrbdConnection,
    DrbdDevice,
    DrbdDeviceRates,
    DrbdPeerDevice,
    DrbdPeerDeviceRates,
    DrbdRates,
    DrbdResource,
    DrbdSample,
    derive_drbd_rates,
)
from replmon.sources.drbd_parse import parse_proc_drbd

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "drbd"


def resource(name: str, *, written: int | None = 0, read: int | None = 0,
             peers: dict[str, tuple[int | None, int | None, int | None]] | None = None,
             ) -> DrbdResource:
    """One volume-0 resource; ``peers`` maps peer name -> (sent, received, out_of_sync) KiB."""
    peers = {"peer": (0, 0, 0)} if peers is None else peers
    return DrbdResource(
        name=name,
        devices=[DrbdDevice(volume=0, minor=0, written_kib=written, read_kib=read)],
        connections=[
            DrbdConnection(peer=peer, peer_devices=[
                DrbdPeerDevice(volume=0, sent_kib=s, received_kib=r, out_of_sync_kib=o)])
            for peer, (s, r, o) in peers.items()
        ],
    )


def sample(mono: float, *resources: DrbdResource) -> DrbdSample:
    return DrbdSample(mono=mono, wall=1_700_000_000 + mono, flavour="8",
                      resources=list(resources))


def test_rates_over_real_elapsed_time() -> None:
    prev = sample(10.0, resource("0", written=1000, read=50, peers={"peer": (900, 7, 4096)}))
    cur = sample(12.0, resource("0", written=3000, read=50, peers={"peer": (2900, 11, 1024)}))
    assert derive_drbd_rates(prev, cur) == DrbdRates(
        dt_s=2.0,
        devices={"0/0": DrbdDeviceRates(written_kib_s=1000.0, read_kib_s=0.0)},
        peer_devices={"0/peer/0": DrbdPeerDeviceRates(
            sent_kib_s=1000.0, received_kib_s=2.0, out_of_sync_change_kib_s=-1536.0)},
    )


def test_counter_that_went_down_gives_none_and_others_still_count() -> None:
    # Reconnect: DRBD 8 zeroes ns/nr on connect; dw keeps counting.
    prev = sample(0.0, resource("0", written=5000, read=10, peers={"peer": (8000, 300, 0)}))
    cur = sample(2.0, resource("0", written=5400, read=10, peers={"peer": (12, 300, 64)}))
    rates = derive_drbd_rates(prev, cur)
    assert rates.devices["0/0"].written_kib_s == 200.0
    peer = rates.peer_devices["0/peer/0"]
    assert peer.sent_kib_s is None
    assert peer.received_kib_s == 0.0
    assert peer.out_of_sync_change_kib_s == 32.0


def test_32_bit_wrap_gives_none() -> None:
    prev = sample(0.0, resource("0", written=2**32 - 10))
    cur = sample(1.0, resource("0", written=5))
    assert derive_drbd_rates(prev, cur).devices["0/0"].written_kib_s is None


def test_first_sample_has_every_key_and_no_rates() -> None:
    cur = sample(5.0, resource("0"), resource("1"))
    rates = derive_drbd_rates(None, cur)
    assert rates.dt_s is None
    assert rates.devices == {"0/0": DrbdDeviceRates(), "1/0": DrbdDeviceRates()}
    assert rates.peer_devices == {"0/peer/0": DrbdPeerDeviceRates(),
                                  "1/peer/0": DrbdPeerDeviceRates()}


@pytest.mark.parametrize("cur_mono", [3.0, 2.5])
def test_time_not_advancing_gives_none(cur_mono: float) -> None:
    prev = sample(3.0, resource("0", written=0))
    cur = sample(cur_mono, resource("0", written=100))
    rates = derive_drbd_rates(prev, cur)
    assert rates.dt_s is None
    assert rates.devices["0/0"].written_kib_s is None
    assert rates.peer_devices["0/peer/0"].out_of_sync_change_kib_s is None


def test_matching_by_resource_peer_and_volume_not_position() -> None:
    prev = sample(0.0,
                  resource("r1", written=100, peers={"bob": (10, 0, 0), "alice": (20, 0, 0)}),
                  resource("r0", written=0, peers={"alice": (0, 0, 0)}))
    cur = sample(4.0,
                  resource("r0", written=400, peers={"alice": (40, 0, 0)}),
                  resource("r1", written=500, peers={"alice": (60, 0, 0), "bob": (10, 0, 0)}),
                  resource("r2", written=999))
    rates = derive_drbd_rates(prev, cur)
    assert {k: v.written_kib_s for k, v in rates.devices.items()} == {
        "r0/0": 100.0, "r1/0": 100.0, "r2/0": None}
    assert {k: v.sent_kib_s for k, v in rates.peer_devices.items()} == {
        "r0/alice/0": 10.0, "r1/alice/0": 10.0, "r1/bob/0": 0.0, "r2/peer/0": None}


def test_missing_counters_give_none() -> None:
    # 8.0 prints no oos; an Unconfigured minor has no counters at all.
    prev = sample(0.0, resource("0", written=None, read=None, peers={"peer": (1, 1, None)}))
    cur = sample(1.0, resource("0", written=None, read=None, peers={"peer": (2, 2, None)}))
    rates = derive_drbd_rates(prev, cur)
    assert rates.devices["0/0"] == DrbdDeviceRates()
    assert rates.peer_devices["0/peer/0"] == DrbdPeerDeviceRates(
        sent_kib_s=1.0, received_kib_s=1.0, out_of_sync_change_kib_s=None)


def test_real_resync_pair_from_the_same_node() -> None:
    # 8.3.8 SyncTarget, then the same node once the resync finished (one blog post).
    # The post does not say how long the resync took: 100 s is assumed here.
    before = parse_proc_drbd((FIXTURES / "s9_838_synctarget_queue_delay.txt").read_text())
    after = parse_proc_drbd((FIXTURES / "s9_838_connected_after_sync.txt").read_text())
    rates = derive_drbd_rates(before.model_copy(update={"mono": 1000.0}),
                              after.model_copy(update={"mono": 1100.0}))
    assert rates.dt_s == 100.0
    assert rates.devices["0/0"] == DrbdDeviceRates(
        written_kib_s=(1023932 - 210272) / 100, read_kib_s=0.0)
    assert rates.peer_devices["0/peer/0"] == DrbdPeerDeviceRates(
        sent_kib_s=0.0, received_kib_s=(1023932 - 210272) / 100,
        out_of_sync_change_kib_s=(0 - 813660) / 100)


def test_rates_are_pure() -> None:
    prev = sample(0.0, resource("0", written=1))
    cur = sample(1.0, resource("0", written=2))
    assert derive_drbd_rates(prev, cur) == derive_drbd_rates(prev, cur)
    assert prev.resources[0].devices[0].written_kib == 1

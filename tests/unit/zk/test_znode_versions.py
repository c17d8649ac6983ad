"""Which znode ``version`` values Kafka 2.8.2 reads, and so which we read (audit deletion-reassign F3 and the
follow-up check of every decoder against ``ZkData.scala``): most decoders never look at the version; the
reassignment znode binds it to a Jackson ``Int``."""

from __future__ import annotations

import pytest

from zkcontroller.model import TopicPartition
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.znodes import ReassignPartitionsZNode

REASSIGN = "/admin/reassign_partitions"
PARTITIONS = '"partitions":[{"topic":"foo","partition":0,"replicas":[4,5]}]'


@pytest.mark.parametrize("version", ['"version":2,', '"version":0,', '"version":-7,', "", '"version":null,',
                                     '"version":"3",', '"version":" 12 ",', '"version":"",', '"version":1.5,',
                                     '"version":2147483647,'])
def test_reassignment_decodes_whatever_int_jackson_reads_as_its_version(version: str) -> None:
    data = f"{{{version}{PARTITIONS}}}".encode()
    assert ReassignPartitionsZNode.decode(data, REASSIGN) == {TopicPartition("foo", 0): (4, 5)}


@pytest.mark.parametrize("version", ["true", "[1]", "{}", '"one"', '"1.0"', "2147483648", "-2147483649.0",
                                     '"2147483648"'])
def test_reassignment_refuses_a_version_jackson_cannot_read_as_an_int(version: str) -> None:
    with pytest.raises(ZnodeDecodeError) as excinfo:
        ReassignPartitionsZNode.decode(f'{{"version":{version},{PARTITIONS}}}'.encode(), REASSIGN)
    assert excinfo.value.path == REASSIGN
    assert "version" in excinfo.value.reason

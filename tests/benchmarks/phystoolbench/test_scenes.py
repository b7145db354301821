"""Every category string of the real PhysToolBench level files maps to one of the paper's four scenes
(issue 26 item 14): the shared sample records as loaded, and the full audit of the five upstream
`tasks.json` files (PhysToolBench/PhysToolBench @ 103d82d, 1,012 items) — including the strings that
name only a sub-scene (Easy 0315's "Life", Hard's "Office", "Art Creation", ...)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ptkit import LEVELS, image_task_layout, sample_records

from toolsight.benchmarks.phystoolbench.benchmark import PhysToolBenchmark
from toolsight.benchmarks.phystoolbench.data import SCENES, scene_of

DLY, IND, OUT, PRO = "Daily", "Industrial", "Outdoor", "Professional"
#: every distinct `category` of the five upstream level files, with the scene it belongs to (the Easy
#: file's "<Scene>-<sub-scene>" names say which scene a bare sub-scene belongs to)
AUDIT: dict[str, dict[str, str]] = {
    "Easy": {
        "Daily Life Scene-Kitchen": DLY, "Daily Life Scene-Living Room/Bedroom": DLY, "Daily Life Scene-Bathroom": DLY,
        "Daily Life Scene-Laundry Room/Storage Room": DLY, "Daily Life Scene-Office": DLY, "Daily life-kitchen": DLY,
        "Daily life scene-kitchen": DLY, "Daily life scene-bathroom": DLY, "Daily life scene-living room/bedroom": DLY,
        "Daily life scene-office": DLY, "Daily life scene-laundry room/storage room": DLY, "Life": DLY,
        "Manufacturing/Maintenance Scene-Construction/Renovation": IND, "Manufacturing/Maintenance Scene-Plumbing Repair": IND,
        "Manufacturing/Maintenance Scene-Garage/Workshop": IND, "Manufacturing/Maintenance Scene-Car Repair": IND,
        "Manufacturing/Maintenance Scene-Furniture Making/Woodworking": IND,
        "Manufacturing/Maintenance Scene-Electronic Repair": IND, "Manufacturing/Maintenance-Garage/Workshop": IND,
        "Manufacturing/Maintenance-Electronic Repair": IND, "Manufacturing/Maintenance-Furniture Making/Woodworking": IND,
        "Manufacturing/maintenance scene-garage/workshop": IND, "Manufacturing/maintenance scene-construction/renovation": IND,
        "Manufacturing/maintenance scene-electronic repair": IND, "Manufacturing/maintenance-construction/renovation": IND,
        "Outdoor Activity Scene-Gardening/Agriculture": OUT, "Outdoor Activity Scene-Outdoor Sports/Camping": OUT,
        "Outdoor Activity Scene-Mountaineering/Hiking": OUT, "Outdoor Activity Scene-Outdoor Barbecue/Party": OUT,
        "Outdoor Activity Scene-Outdoor Cleaning/Maintenance": OUT, "Outdoor Activity Scene-Fishing/Water Sports": OUT,
        "Outdoor activity scene-mountaineering/hiking": OUT, "Outdoor activity scene-outdoor sports/camping": OUT,
        "Outdoor activity scene-outdoor barbecue/party": OUT, "Outdoor activity scene-fishing/water sports": OUT,
        "Professional Scene-Medical/Laboratory": PRO, "Professional Scene-Smart Home/IoT": PRO,
        "Professional Scene-Digital Office Equipment": PRO, "Professional Scene-Digital Office 'Equipment'": PRO,
        "Professional Scene-Photography/Videography": PRO, "Professional Scene-Music Production": PRO,
        "Professional Scene-Phone/Tablet Maintenance": PRO, "Professional Scene-Art Creation": PRO,
        "Professional-Photography/Videography": PRO, "Professional scene-medical/laboratory": PRO,
        "Professional scene-classroom/training room": PRO, "Professional scene-restaurant/hotel": PRO,
        "Professional scene-music production": PRO, "Professional scene-photography/videography": PRO,
        "Professional scene-smart home/IoT": PRO, "Professional scene-digital office equipment": PRO,
    },
    "Medium-M1": {"Daily Life": DLY, "Manufacturing/Repair": IND, "Professional Scene": PRO, "Outdoor": OUT,
                  "Outdoor Activities": OUT},
    "Medium-M2": {"Manufacturing & Repair": IND, "Manufacturing &- Repair": IND, "Daily Life": DLY, "Daily life": DLY,
                  "Outdoor Activities": OUT, "Outdoor Dctivities": OUT, "Professional Scene": PRO},
    "Medium-M3": {"Daily Life": DLY, "Manufacturing & Repair": IND, "Outdoor Activities": OUT, "Professional Scenarios": PRO},
    "Hard": {
        "Daily Life": DLY, "Daily life": DLY, "Daily Faily Life": DLY, "Office": DLY, "Repair": IND, "Car Repair": IND,
        "Construction/Renovation": IND, "Manufacturing and Repair": IND, "Manufacturing and repair": IND, "Outdoor": OUT,
        "Outdoor Activities": OUT, "Outdoor activities": OUT, "Outdoor Sports/Camping": OUT, "Gardening/Agriculture": OUT,
        "Professional": PRO, "Professional scene": PRO, "Art Creation": PRO,
    },
}


@pytest.mark.parametrize("level", LEVELS)
def test_every_category_of_the_real_level_files_maps_to_its_scene(level: str) -> None:
    wrong = {c: (scene_of(c), want) for c, want in AUDIT[level].items() if scene_of(c) != want}
    assert not wrong, wrong


def test_the_shared_level_files_load_with_a_scene_for_every_task(tmp_path: Path) -> None:
    recs = sample_records()
    for level in LEVELS:
        for r in recs[level]:
            assert r["category"] in AUDIT[level], (level, r["id"], r["category"])  # the audit covers the sample
    loaded = PhysToolBenchmark().load(image_task_layout(tmp_path / "repo"))
    assert len(loaded.tasks) == 40
    missing = [t.id for t in loaded.tasks if t.tags.get("scene") not in SCENES]
    assert not missing, missing


def test_a_string_naming_no_scene_maps_to_none() -> None:
    assert scene_of("Space") is None and scene_of("") is None
    assert scene_of("  life ") == DLY and scene_of("OFFICE") == DLY  # case and spacing do not matter

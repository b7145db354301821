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

D, I, O, P = "Daily", "Industrial", "Outdoor", "Professional"
#: every distinct `category` of the five upstream level files, with the scene it belongs to (the Easy
#: file's "<Scene>-<sub-scene>" names say which scene a bare sub-scene belongs to)
AUDIT: dict[str, dict[str, str]] = {
    "Easy": {
        "Daily Life Scene-Kitchen": D, "Daily Life Scene-Living Room/Bedroom": D, "Daily Life Scene-Bathroom": D,
        "Daily Life Scene-Laundry Room/Storage Room": D, "Daily Life Scene-Office": D, "Daily life-kitchen": D,
        "Daily life scene-kitchen": D, "Daily life scene-bathroom": D, "Daily life scene-living room/bedroom": D,
        "Daily life scene-office": D, "Daily life scene-laundry room/storage room": D, "Life": D,
        "Manufacturing/Maintenance Scene-Construction/Renovation": I, "Manufacturing/Maintenance Scene-Plumbing Repair": I,
        "Manufacturing/Maintenance Scene-Garage/Workshop": I, "Manufacturing/Maintenance Scene-Car Repair": I,
        "Manufacturing/Maintenance Scene-Furniture Making/Woodworking": I,
        "Manufacturing/Maintenance Scene-Electronic Repair": I, "Manufacturing/Maintenance-Garage/Workshop": I,
        "Manufacturing/Maintenance-Electronic Repair": I, "Manufacturing/Maintenance-Furniture Making/Woodworking": I,
        "Manufacturing/maintenance scene-garage/workshop": I, "Manufacturing/maintenance scene-construction/renovation": I,
        "Manufacturing/maintenance scene-electronic repair": I, "Manufacturing/maintenance-construction/renovation": I,
        "Outdoor Activity Scene-Gardening/Agriculture": O, "Outdoor Activity Scene-Outdoor Sports/Camping": O,
        "Outdoor Activity Scene-Mountaineering/Hiking": O, "Outdoor Activity Scene-Outdoor Barbecue/Party": O,
        "Outdoor Activity Scene-Outdoor Cleaning/Maintenance": O, "Outdoor Activity Scene-Fishing/Water Sports": O,
        "Outdoor activity scene-mountaineering/hiking": O, "Outdoor activity scene-outdoor sports/camping": O,
        "Outdoor activity scene-outdoor barbecue/party": O, "Outdoor activity scene-fishing/water sports": O,
        "Professional Scene-Medical/Laboratory": P, "Professional Scene-Smart Home/IoT": P,
        "Professional Scene-Digital Office Equipment": P, "Professional Scene-Digital Office 'Equipment'": P,
        "Professional Scene-Photography/Videography": P, "Professional Scene-Music Production": P,
        "Professional Scene-Phone/Tablet Maintenance": P, "Professional Scene-Art Creation": P,
        "Professional-Photography/Videography": P, "Professional scene-medical/laboratory": P,
        "Professional scene-classroom/training room": P, "Professional scene-restaurant/hotel": P,
        "Professional scene-music production": P, "Professional scene-photography/videography": P,
        "Professional scene-smart home/IoT": P, "Professional scene-digital office equipment": P,
    },
    "Medium-M1": {"Daily Life": D, "Manufacturing/Repair": I, "Professional Scene": P, "Outdoor": O,
                  "Outdoor Activities": O},
    "Medium-M2": {"Manufacturing & Repair": I, "Manufacturing &- Repair": I, "Daily Life": D, "Daily life": D,
                  "Outdoor Activities": O, "Outdoor Dctivities": O, "Professional Scene": P},
    "Medium-M3": {"Daily Life": D, "Manufacturing & Repair": I, "Outdoor Activities": O, "Professional Scenarios": P},
    "Hard": {
        "Daily Life": D, "Daily life": D, "Daily Faily Life": D, "Office": D, "Repair": I, "Car Repair": I,
        "Construction/Renovation": I, "Manufacturing and Repair": I, "Manufacturing and repair": I, "Outdoor": O,
        "Outdoor Activities": O, "Outdoor activities": O, "Outdoor Sports/Camping": O, "Gardening/Agriculture": O,
        "Professional": P, "Professional scene": P, "Art Creation": P,
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
    assert scene_of("  life ") == D and scene_of("OFFICE") == D  # case and spacing do not matter

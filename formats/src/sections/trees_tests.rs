use super::*;

fn chain(side: u32) -> Vec<Rgba8Level> {
    let mut out = Vec::new();
    let mut s = side;
    loop {
        out.push(Rgba8Level { width: s, height: s, rgba: vec![s as u8; 4 * (s * s) as usize] });
        if s == 1 {
            return out;
        }
        s /= 2;
    }
}

fn prototypes() -> TreePrototypes {
    let p = TreePrototype {
        species: 0,
        seed: 9,
        height: 1.5,
        crown_radius: 0.5,
        positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        normals: vec![[0.0, 0.0, 1.0]; 4],
        uvs: vec![[0.5; 2]; 4],
        ao: vec![255, 128, 0, 7],
        bark_indices: vec![0, 1, 2],
        leaf_indices: vec![1, 2, 3, 3, 2, 1],
        lods: [
            TreeLod { bark_index_count: 3, leaf_index_count: 6 },
            TreeLod { bark_index_count: 3, leaf_index_count: 3 },
            TreeLod { bark_index_count: 0, leaf_index_count: 3 },
        ],
    };
    TreePrototypes { species: vec!["oak".into()], prototypes: vec![p] }
}

fn impostors() -> TreeImpostors {
    let levels = (0..3)
        .map(|l| {
            let size = 8 >> l;
            let t = (size * size) as usize;
            AtlasLevel { size, albedo: vec![l as u8; 4 * t], normal: vec![9; 4 * t], depth: vec![300; t] }
        })
        .collect();
    TreeImpostors {
        atlases: vec![ImpostorAtlas { layout: ImpostorLayout::HemiOctahedral, grid: 2, view_px: 4, center: [0.0, 0.0, 1.0], radius: 1.2, levels }],
    }
}

#[test]
fn every_tree_section_round_trips() {
    let p = prototypes();
    assert_eq!(TreePrototypes::decode(&p.encode().unwrap()).unwrap(), p);
    let t = TreeTextures { species: vec![SpeciesTextures { bark: chain(4), leaf: chain(8) }] };
    assert_eq!(TreeTextures::decode(&t.encode().unwrap()).unwrap(), t);
    let i = impostors();
    assert_eq!(TreeImpostors::decode(&i.encode().unwrap()).unwrap(), i);
    let card = |s| TreeCard { color: chain(s).remove(0), normal: chain(s).remove(0) };
    let c =
        TreeCards { cards: vec![TreePrototypeCards { leaf_extent: [-1.0, 0.0, 1.0, 2.0], leaf: card(4), branch_extent: [0.0; 4], branch: card(2) }] };
    assert_eq!(TreeCards::decode(&c.encode().unwrap()).unwrap(), c);
    let inst = TreeInstances {
        prototypes_hash: 0xFEED,
        instances: vec![TreeInstance { position: [1.0, 2.0, 3.0], yaw: 0.5, scale: 1.1, tint: [1.0, 0.9, 1.05], prototype: 0 }],
    };
    assert_eq!(TreeInstances::decode(&inst.encode().unwrap()).unwrap(), inst);
    let light = TreeLighting(vec![[[1.0, 0.5, 0.25], [0.0; 3], [2.0, 2.0, 2.0]]]);
    assert_eq!(TreeLighting::decode(&light.encode().unwrap()).unwrap(), light);
}

#[test]
fn truncations_and_corruptions_are_errors_not_panics() {
    let raws = [
        prototypes().encode().unwrap(),
        impostors().encode().unwrap(),
        TreeTextures { species: vec![SpeciesTextures { bark: chain(2), leaf: chain(2) }] }.encode().unwrap(),
        TreeInstances { prototypes_hash: 1, instances: vec![TreeInstance { scale: 1.0, ..Default::default() }] }.encode().unwrap(),
    ];
    for raw in &raws {
        for cut in 0..raw.len() {
            let r = &raw[..cut];
            assert!(TreePrototypes::decode(r).is_err() || cut == 0 || raw != &raws[0]);
            let _ = (TreeImpostors::decode(r), TreeTextures::decode(r), TreeInstances::decode(r), TreeCards::decode(r), TreeLighting::decode(r));
        }
        for at in 0..raw.len() {
            let mut r = raw.clone();
            r[at] ^= 0xFF;
            let _ = (TreePrototypes::decode(&r), TreeImpostors::decode(&r), TreeTextures::decode(&r), TreeInstances::decode(&r));
        }
    }
}

#[test]
fn decoders_refuse_what_a_reader_would_trip_over() {
    let mut p = prototypes();
    p.prototypes[0].leaf_indices[0] = 4;
    assert!(TreePrototypes::decode(&p.encode().unwrap()).unwrap_err().to_string().contains("index 4"));
    let mut p = prototypes();
    p.prototypes[0].lods[2].leaf_index_count = 6;
    assert!(TreePrototypes::decode(&p.encode().unwrap()).unwrap_err().to_string().contains("prefix"));
    let mut p = prototypes();
    p.prototypes[0].species = 1;
    assert!(TreePrototypes::decode(&p.encode().unwrap()).is_err());
    let mut i = impostors();
    i.atlases[0].levels[1].size = 3;
    assert!(TreeImpostors::decode(&i.encode().unwrap()).is_err());
    let mut t = TreeTextures { species: vec![SpeciesTextures { bark: chain(4), leaf: chain(4) }] };
    t.species[0].leaf.pop();
    assert!(TreeTextures::decode(&t.encode().unwrap()).unwrap_err().to_string().contains("1×1"));
    let nan = TreeInstances { prototypes_hash: 0, instances: vec![TreeInstance { position: [f32::NAN; 3], scale: 1.0, ..Default::default() }] };
    assert!(TreeInstances::decode(&nan.encode().unwrap()).is_err());
    // A count that promises more than the bytes hold is refused before allocating.
    let mut huge = TreeInstances::default().encode().unwrap();
    huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(TreeInstances::decode(&huge).unwrap_err().to_string().contains("cannot fit"));
}

#[test]
fn impostors_in_pieces_are_the_encoded_section() {
    let whole = impostors().encode().unwrap();
    let pieces = impostors().into_pieces().unwrap();
    assert_eq!(pieces.len(), 1 + impostors().atlases.len(), "the count, then one piece per atlas");
    assert_eq!(pieces.concat(), whole);
    assert_eq!(whole.capacity(), whole.len(), "encoded at its exact size");
}

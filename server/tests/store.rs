//! The store's behaviour, one suite run against SQLite and PostgreSQL.

mod support;

use server::store::{ProfileRow, StoreError};
use support::{Engine, TestDb};

fn row(id: &str) -> ProfileRow {
    ProfileRow {
        id: id.into(),
        name: format!("profile {id}"),
        revision: 1,
        document: "[]".into(),
        created_at_ms: 1_000,
        updated_at_ms: 1_000,
    }
}

async fn profiles_crud_with_revisions(engine: Engine) {
    let db = TestDb::new(engine).await;
    let s = &db.store;
    assert!(s.list_profiles().await.unwrap().is_empty());
    let a = s.insert_profile(&row("a")).await.unwrap();
    assert_eq!(a.revision, 1);
    s.insert_profile(&ProfileRow {
        created_at_ms: 2_000,
        ..row("b")
    })
    .await
    .unwrap();
    assert!(matches!(
        s.insert_profile(&row("a")).await,
        Err(StoreError::AlreadyExists)
    ));

    let listed: Vec<String> = s
        .list_profiles()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, ["a", "b"]);

    let updated = s
        .update_profile("a", 1, "renamed", "[1]", 5_000)
        .await
        .unwrap();
    assert_eq!(
        (
            updated.revision,
            updated.name.as_str(),
            updated.document.as_str()
        ),
        (2, "renamed", "[1]")
    );
    assert_eq!(updated.created_at_ms, 1_000);
    assert_eq!(updated.updated_at_ms, 5_000);

    // A stale revision changes nothing and reports the stored one.
    match s.update_profile("a", 1, "lost", "[2]", 6_000).await {
        Err(StoreError::StaleRevision { current }) => assert_eq!(current, 2),
        other => panic!("expected a stale revision, got {other:?}"),
    }
    assert_eq!(s.get_profile("a").await.unwrap().unwrap().name, "renamed");
    assert!(matches!(
        s.update_profile("zz", 1, "x", "[]", 1).await,
        Err(StoreError::NotFound)
    ));

    // Normalisation keeps the revision and is fenced by it.
    s.normalise_profile_document("a", 1, "[9]").await.unwrap();
    assert_eq!(s.get_profile("a").await.unwrap().unwrap().document, "[1]");
    s.normalise_profile_document("a", 2, "[3]").await.unwrap();
    let a = s.get_profile("a").await.unwrap().unwrap();
    assert_eq!((a.document.as_str(), a.revision), ("[3]", 2));

    assert!(matches!(
        s.delete_profile("a", Some(1)).await,
        Err(StoreError::StaleRevision { current: 2 })
    ));
    s.delete_profile("a", Some(2)).await.unwrap();
    assert!(s.get_profile("a").await.unwrap().is_none());
    assert!(matches!(
        s.delete_profile("a", None).await,
        Err(StoreError::NotFound)
    ));
}

async fn settings_are_set_once(engine: Engine) {
    let db = TestDb::new(engine).await;
    let s = &db.store;
    assert_eq!(s.get_setting("k").await.unwrap(), None);
    assert!(s.set_setting_once("k", "v1").await.unwrap());
    assert!(!s.set_setting_once("k", "v2").await.unwrap());
    assert_eq!(s.get_setting("k").await.unwrap().as_deref(), Some("v1"));
    s.ping().await.unwrap();
}

macro_rules! on_both_engines {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[tokio::test] async fn $name() { super::$name(super::Engine::Sqlite).await } )*
        }
        mod postgres {
            $( #[tokio::test] async fn $name() { super::$name(super::Engine::Postgres).await } )*
        }
    };
}

on_both_engines!(profiles_crud_with_revisions, settings_are_set_once);
